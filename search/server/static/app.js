// The search page: calls GET /search (once per mode shown) and draws the hits.
// Plain DOM, no build step; text is always inserted as text, never as HTML.
"use strict";

const SIDE_BY_SIDE = ["static", "contextual", "hybrid"];
const DEFAULT_MODE = "hybrid";
const DEFAULT_K = "10";
// The filter fields: each is a repeatable parameter of GET /search, written in its field
// as a comma-separated list (every item is sent as one repetition).
const LIST_FIELDS = ["under", "path", "type", "where"];
// The fields sent as they are when not empty.
const NUMBER_FIELDS = ["k", "min_similarity"];
// The check boxes sent as `true` when ticked (and left out when not).
const FLAG_FIELDS = ["explain"];
// The words shown for `match` (when the server gives it).
const MATCH_WORDS = { strong: "strong match", weak: "weak match", none: "no good match" };
// A contextual cosine below this is shown as a weak match (see the README: unrelated
// queries over the sample corpus and real docs peaked below it).
const WEAK_SIMILARITY = 0.3;
const form = document.getElementById("search-form");
const queryInput = document.getElementById("query");
const tokenField = document.getElementById("token-field");
const tokenInput = document.getElementById("token");
const statusLine = document.getElementById("status");
const resultsArea = document.getElementById("results");
const documentDialog = document.getElementById("document");
const rootList = document.getElementById("roots");

function selectedMode() {
  return form.querySelector("input[name=mode]:checked").value;
}

// The items of a list field: "md, rst" is md and rst; empty items are dropped.
function listItems(name) {
  return form.elements[name].value
    .split(",")
    .map((item) => item.trim())
    .filter(Boolean);
}

// The query string of GET /search for `mode`, with every filter and limit that is set.
function searchParameters(query, mode) {
  const parameters = new URLSearchParams({ q: query, mode });
  for (const name of NUMBER_FIELDS) {
    const value = form.elements[name].value.trim();
    if (value) parameters.set(name, value);
  }
  if (!parameters.has("k")) parameters.set("k", DEFAULT_K);
  for (const name of FLAG_FIELDS) if (form.elements[name].checked) parameters.set(name, "true");
  for (const name of LIST_FIELDS) for (const item of listItems(name)) parameters.append(name, item);
  return parameters;
}

// The page's address: the query, the mode and each field as typed, so that a reload or a
// shared link shows the same search.
function pageAddress(query, mode) {
  const address = new URLSearchParams({ q: query, mode });
  for (const name of [...LIST_FIELDS, ...NUMBER_FIELDS]) {
    const value = form.elements[name].value.trim();
    if (value && !(name === "k" && value === DEFAULT_K)) address.set(name, value);
  }
  for (const name of FLAG_FIELDS) if (form.elements[name].checked) address.set(name, "true");
  return `?${address}`;
}

// The page's modes: the values of its radio buttons (hybrid ... side-by-side).
function knownModes() {
  return Array.from(form.elements.mode, (radio) => radio.value);
}

// A header value carries bytes; fetch sends each character of the string as one byte
// (and refuses characters past U+00FF), so the token is given as its UTF-8 bytes, the
// way `ctxsearch serve` compares it.
function utf8Bytes(text) {
  return Array.from(new TextEncoder().encode(text), (byte) => String.fromCharCode(byte)).join("");
}

async function getJson(path) {
  const headers = {};
  if (tokenInput.value) headers.Authorization = `Bearer ${utf8Bytes(tokenInput.value)}`;
  const response = await fetch(path, { headers });
  const body = await response.json();
  if (!response.ok) throw new Error(`${response.status}: ${body.detail}`);
  return body;
}

// The API's offsets count code points (Python's characters); a JavaScript string counts
// UTF-16 units, two for each character outside the Basic Multilingual Plane (an emoji, a
// rare CJK ideograph). The unit index in `text` of each of `offsets` (in ascending order).
function unitIndexes(text, offsets) {
  const found = [];
  let unit = 0;
  let point = 0;
  for (const offset of offsets) {
    while (point < offset && unit < text.length) {
      const high = text.charCodeAt(unit);
      const low = text.charCodeAt(unit + 1);
      const pair = high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff;
      unit += pair ? 2 : 1;
      point += 1;
    }
    found.push(unit);
  }
  return found;
}

// The snippet as text nodes, with each highlighted span (code point offsets) in a <mark>.
function snippetNode(snippet, highlights) {
  const paragraph = document.createElement("p");
  paragraph.className = "snippet";
  const units = unitIndexes(snippet, highlights.flat());
  let position = 0;
  for (let index = 0; index < units.length; index += 2) {
    const [start, end] = [units[index], units[index + 1]];
    paragraph.append(snippet.slice(position, start));
    const mark = document.createElement("mark");
    mark.textContent = snippet.slice(start, end);
    paragraph.append(mark);
    position = end;
  }
  paragraph.append(snippet.slice(position));
  return paragraph;
}

// Where a hit is, as its label shows it: the last folders, the file name and the line
// that matches best (`docs/tutorial/security.md:12`); a PDF's page and the line within
// it; a record's id as it is.
function hitLocation(hit) {
  if (hit.id !== null && hit.id !== undefined) return hit.path;
  const shown = hit.path.split("/").slice(-3).join("/");
  const line = hit.match_line ?? hit.line;
  if (line) return `${shown}:${line}`;
  const page = hit.match_page ?? hit.page;
  if (!page) return shown;
  return `${shown} · page ${page}${hit.match_page_line ? `, line ${hit.match_page_line}` : ""}`;
}

// `match` (strong, weak or none) when the server gives it; without it, a similarity
// below WEAK_SIMILARITY is a weak match.
function matchLabel(hit) {
  if (hit.match in MATCH_WORDS) return hit.match;
  if (hit.similarity !== null && hit.similarity !== undefined && hit.similarity < WEAK_SIMILARITY) {
    return "weak";
  }
  return null;
}

// Rounded down, as the terminal table does: the digits shown never reach a minimum
// similarity the hit does not (0.298 shows as 0.29, not 0.30).
function shownSimilarity(similarity) {
  return (Math.floor(similarity * 100 + 1e-9) / 100).toFixed(2);
}

function textNode(tag, className, text) {
  const node = document.createElement(tag);
  node.className = className;
  node.textContent = text;
  return node;
}

function hitNode(hit) {
  const item = document.createElement("li");
  item.className = "result";
  const open = (event) => {
    event.preventDefault();
    showDocument(hit);
  };
  const parts = hit.path.split("/");
  const title = textNode("a", "title", parts[parts.length - 1]);
  title.href = `#document-${hit.document_id}`;
  title.addEventListener("click", open);
  const score = textNode("span", "score", hit.score.toFixed(3));
  if (hit.similarity !== null && hit.similarity !== undefined) {
    score.textContent += ` · similarity ${shownSimilarity(hit.similarity)}`;
  }
  const line = document.createElement("p");
  line.className = "headline";
  line.append(title, score);
  const match = matchLabel(hit);
  if (match) {
    line.append(textNode("span", `match match-${match}`, MATCH_WORDS[match]));
    if (match !== "strong") item.classList.add("weak");
  }
  item.append(line);
  const trail = hit.section || hit.heading;
  if (trail) item.append(textNode("p", "section", `§ ${trail}`));
  item.append(snippetNode(hit.snippet, hit.highlights));
  const where = document.createElement("p");
  where.className = "path";
  const location = textNode("a", "location", hitLocation(hit));
  location.href = title.href;
  location.title = hit.path;
  location.addEventListener("click", open);
  where.append(location);
  const copies = (hit.duplicates || []).length;
  if (copies) {
    const also = textNode("span", "duplicates", ` · also in ${copies} other file${copies === 1 ? "" : "s"}`);
    also.title = hit.duplicates.join("\n");
    where.append(also);
  }
  const found = Object.entries(hit.found_by).map(([space, rank]) => `${space} #${rank}`);
  if (found.length) where.append(` · found by ${found.join(", ")}`);
  item.append(where);
  if (hit.explain) item.append(explanationNode(hit.explain));
  return item;
}

// A number with a sign, as the explanation's shares are shown.
function signed(value) {
  return (value >= 0 ? "+" : "") + value.toFixed(3);
}

// The lines of a hit's explanation (`explain=true`), as `ctxsearch query --explain` has them.
function explanationLines(explained) {
  const lines = [];
  const sides = Object.entries(explained.sides).map(([space, side]) => {
    const rank = side.rank === null ? "not listed" : `#${side.rank}`;
    const score = side.score === null ? "no score" : side.score.toFixed(4);
    return `${space} ${rank} of ${side.listed} (${space === "lexical" ? "bm25" : "cosine"} ${score})`;
  });
  lines.push(`ranks: ${sides.join("; ")}`);
  const fusion = explained.fusion;
  if (fusion) {
    lines.push(
      `fusion: dense ${fusion.dense_weight.toFixed(2)} × z + lexical ${fusion.lexical_weight.toFixed(2)} × z` +
        ` = ${fusion.dense_part.toFixed(3)} + ${fusion.lexical_part.toFixed(3)} = ${fusion.fused.toFixed(3)} for the passage (${fusion.rule})`,
    );
    lines.push(`why: ${fusion.why}`);
  }
  if (explained.terms.length) {
    const terms = explained.terms.map(
      (t) => `${t.term} ${t.in_passage ? "held" : "absent"} (in ${t.passages}, idf ${t.idf.toFixed(2)})`,
    );
    lines.push(`terms (of ${explained.index_passages} passages): ${terms.join(", ")}`);
  }
  for (const [space, words] of Object.entries(explained.words || {})) {
    if (words.note) {
      lines.push(`words, ${space}: ${words.note}`);
      continue;
    }
    const listed = words.words.map((w) => `${w.word} ${signed(w.share)}`).join(", ");
    lines.push(
      `words, ${space}: cosine ${words.cosine.toFixed(3)} = ${listed}; other words ` +
        `${signed(words.other_words)}, function words ${signed(words.function_words)}, ` +
        `special tokens ${signed(words.special_tokens)}`,
    );
  }
  for (const note of explained.notes) lines.push(`note: ${note}`);
  return lines;
}

function explanationNode(explained) {
  const details = document.createElement("details");
  details.className = "explain";
  details.append(textNode("summary", "", "why here"));
  for (const line of explanationLines(explained)) details.append(textNode("p", "", line));
  return details;
}

function columnNode(mode, response) {
  const column = document.createElement("section");
  column.className = "column";
  column.dataset.mode = mode;
  const heading = document.createElement("h2");
  heading.textContent = mode;
  const list = document.createElement("ol");
  list.className = "results";
  for (const hit of response.results) list.append(hitNode(hit));
  column.append(heading, list);
  if (!response.results.length) {
    column.append(textNode("p", "empty", "No results."));
    for (const hint of response.hints || []) column.append(textNode("p", "hint", `hint: ${hint}`));
  }
  return column;
}

async function showDocument(hit) {
  try {
    const doc = await getJson(`/documents/${hit.document_id}`);
    documentDialog.querySelector("h2").textContent = doc.path;
    const text = documentDialog.querySelector("pre");
    // the passage marked, and inside it the line that matches best (`match_start`..`match_end`)
    const mark = document.createElement("mark");
    const [start, matchStart, matchEnd, end] = unitIndexes(doc.text, [
      hit.start,
      hit.match_start ?? hit.start,
      hit.match_end ?? hit.start,
      hit.end,
    ]);
    const line = document.createElement("strong");
    line.className = "match-line";
    line.textContent = doc.text.slice(matchStart, matchEnd);
    mark.append(doc.text.slice(start, matchStart), line, doc.text.slice(matchEnd, end));
    text.replaceChildren(doc.text.slice(0, start), mark, doc.text.slice(end));
    documentDialog.showModal();
    line.scrollIntoView({ block: "center" });
  } catch (error) {
    statusLine.textContent = error.message;
  }
}

// While a run fills the contextual space, its newest passages are found by their words
// (lexical and static) only: the status line says how far it is.
function fillingNote(completeness) {
  if (!completeness || completeness.contextual_complete) return "";
  const { contextual_passages: filled, passages } = completeness;
  return ` · filling: ${filled.toLocaleString()} of ${passages.toLocaleString()} passages have contextual vectors`;
}

// Each search is numbered: when searches overlap (a filter changed, then Enter), only the
// newest one's answer is shown, whatever order the answers arrive in.
let latestSearch = 0;

async function search() {
  const query = queryInput.value.trim();
  if (!query) return;
  const asked = ++latestSearch;
  const mode = selectedMode();
  const modes = mode === "side-by-side" ? SIDE_BY_SIDE : [mode];
  history.replaceState(null, "", pageAddress(query, mode));
  statusLine.textContent = "Searching…";
  try {
    const responses = await Promise.all(
      modes.map((m) => getJson(`/search?${searchParameters(query, m)}`)),
    );
    if (asked !== latestSearch) return;
    resultsArea.className = modes.length > 1 ? "side-by-side" : "";
    resultsArea.replaceChildren(...modes.map((m, i) => columnNode(m, responses[i])));
    const ms = responses.map((r) => (r.timings.encode_seconds + r.timings.search_seconds) * 1000);
    statusLine.textContent = `${modes.join(", ")} · ${ms.map((t) => t.toFixed(0)).join(" / ")} ms`;
    statusLine.textContent += fillingNote(responses[0].completeness);
  } catch (error) {
    if (asked !== latestSearch) return;
    resultsArea.replaceChildren();
    statusLine.textContent = error.message;
  }
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  search();
});
// A new mode, a ticked box, or a changed filter or limit, searches again (typing in the query does not).
form.addEventListener("change", (event) => {
  const asked = event.target.name === "mode" || FLAG_FIELDS.includes(event.target.name);
  if (asked || event.target.closest("#filters")) search();
});
document.getElementById("clear-filters").addEventListener("click", () => {
  for (const name of [...LIST_FIELDS, ...NUMBER_FIELDS]) form.elements[name].value = "";
  form.elements.k.value = DEFAULT_K;
  search();
});
document.getElementById("close-document").addEventListener("click", () => documentDialog.close());

// The indexed folders offered in the folder field (as `under` needs them: absolute);
// the field works without them.
async function showRoots() {
  try {
    const info = await getJson("/info");
    rootList.replaceChildren(
      ...(info.roots || []).map((root) => Object.assign(document.createElement("option"), { value: root })),
    );
  } catch {
    rootList.replaceChildren();
  }
}

async function start() {
  const health = await getJson("/health");
  tokenField.hidden = !health.auth_required;
  tokenInput.value = sessionStorage.getItem("ctxsearch-token") || "";
  tokenInput.addEventListener("change", () => {
    sessionStorage.setItem("ctxsearch-token", tokenInput.value);
    showRoots();
  });
  const params = new URLSearchParams(location.search);
  // The mode from the address is only ever compared with the known ones, never put in a
  // selector: an unknown one (`?mode="]`) falls back to the default.
  const wanted = knownModes().includes(params.get("mode")) ? params.get("mode") : DEFAULT_MODE;
  form.elements.mode.value = wanted;
  // only ever field values: the API checks them when the search is sent
  for (const name of [...LIST_FIELDS, ...NUMBER_FIELDS]) {
    if (params.has(name)) form.elements[name].value = params.get(name);
  }
  for (const name of FLAG_FIELDS) form.elements[name].checked = params.get(name) === "true";
  showRoots();
  if (params.get("q")) {
    queryInput.value = params.get("q");
    search();
  }
}

start();
