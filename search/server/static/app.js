// The search page: calls GET /search (once per mode shown) and draws the hits.
// Plain DOM, no build step; text is always inserted as text, never as HTML.
"use strict";

const SIDE_BY_SIDE = ["static", "contextual", "hybrid"];
const DEFAULT_MODE = "hybrid";
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

function selectedMode() {
  return form.querySelector("input[name=mode]:checked").value;
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

// The snippet as text nodes, with each highlighted span in a <mark>.
function snippetNode(snippet, highlights) {
  const paragraph = document.createElement("p");
  paragraph.className = "snippet";
  let position = 0;
  for (const [start, end] of highlights) {
    paragraph.append(snippet.slice(position, start));
    const mark = document.createElement("mark");
    mark.textContent = snippet.slice(start, end);
    paragraph.append(mark);
    position = end;
  }
  paragraph.append(snippet.slice(position));
  return paragraph;
}

function hitNode(hit) {
  const item = document.createElement("li");
  item.className = "result";
  const parts = hit.path.split("/");
  const title = document.createElement("a");
  title.className = "title";
  title.href = `#document-${hit.document_id}`;
  title.textContent = parts[parts.length - 1];
  title.addEventListener("click", (event) => {
    event.preventDefault();
    showDocument(hit);
  });
  const score = document.createElement("span");
  score.className = "score";
  score.textContent = hit.score.toFixed(3);
  if (hit.similarity !== null && hit.similarity !== undefined) {
    score.textContent += ` · similarity ${hit.similarity.toFixed(2)}`;
    if (hit.similarity < WEAK_SIMILARITY) {
      item.classList.add("weak");
      score.textContent += " · weak match";
    }
  }
  const where = document.createElement("p");
  where.className = "path";
  const found = Object.entries(hit.found_by).map(([space, rank]) => `${space} #${rank}`);
  const line = hit.match_line || hit.line;
  const page = hit.match_page || hit.page;
  const pageLine = hit.match_page_line ? `, line ${hit.match_page_line}` : "";
  const place = line ? `:${line}` : page ? ` · page ${page}${pageLine}` : "";
  const trail = hit.section || hit.heading;
  const section = trail ? ` · § ${trail}` : "";
  const copies = (hit.duplicates || []).length;
  const also = copies ? ` · also in ${copies} other file${copies === 1 ? "" : "s"}` : "";
  where.textContent =
    parts.slice(-3, -1).join("/") + place + section + also + (found.length ? ` · found by ${found.join(", ")}` : "");
  item.append(title, score, snippetNode(hit.snippet, hit.highlights), where);
  return item;
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
  if (!response.results.length) column.append("No results.");
  return column;
}

async function showDocument(hit) {
  try {
    const doc = await getJson(`/documents/${hit.document_id}`);
    documentDialog.querySelector("h2").textContent = doc.path;
    const text = documentDialog.querySelector("pre");
    // the passage marked, and inside it the line that matches best (`match_start`..`match_end`)
    const mark = document.createElement("mark");
    const matchStart = hit.match_start ?? hit.start;
    const matchEnd = hit.match_end ?? hit.start;
    const line = document.createElement("strong");
    line.className = "match-line";
    line.textContent = doc.text.slice(matchStart, matchEnd);
    mark.append(doc.text.slice(hit.start, matchStart), line, doc.text.slice(matchEnd, hit.end));
    text.replaceChildren(doc.text.slice(0, hit.start), mark, doc.text.slice(hit.end));
    documentDialog.showModal();
    line.scrollIntoView({ block: "center" });
  } catch (error) {
    statusLine.textContent = error.message;
  }
}

async function search() {
  const query = queryInput.value.trim();
  if (!query) return;
  const mode = selectedMode();
  const modes = mode === "side-by-side" ? SIDE_BY_SIDE : [mode];
  history.replaceState(null, "", `?${new URLSearchParams({ q: query, mode })}`);
  statusLine.textContent = "Searching…";
  try {
    const responses = await Promise.all(
      modes.map((m) => getJson(`/search?${new URLSearchParams({ q: query, mode: m, k: 10 })}`)),
    );
    resultsArea.className = modes.length > 1 ? "side-by-side" : "";
    resultsArea.replaceChildren(...modes.map((m, i) => columnNode(m, responses[i])));
    const ms = responses.map((r) => (r.timings.encode_seconds + r.timings.search_seconds) * 1000);
    statusLine.textContent = `${modes.join(", ")} · ${ms.map((t) => t.toFixed(0)).join(" / ")} ms`;
  } catch (error) {
    resultsArea.replaceChildren();
    statusLine.textContent = error.message;
  }
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  search();
});
form.addEventListener("change", (event) => {
  if (event.target.name === "mode") search();
});
document.getElementById("close-document").addEventListener("click", () => documentDialog.close());

async function start() {
  const health = await getJson("/health");
  tokenField.hidden = !health.auth_required;
  tokenInput.value = sessionStorage.getItem("ctxsearch-token") || "";
  tokenInput.addEventListener("change", () => sessionStorage.setItem("ctxsearch-token", tokenInput.value));
  const params = new URLSearchParams(location.search);
  // The mode from the address is only ever compared with the known ones, never put in a
  // selector: an unknown one (`?mode="]`) falls back to the default.
  const wanted = knownModes().includes(params.get("mode")) ? params.get("mode") : DEFAULT_MODE;
  form.elements.mode.value = wanted;
  if (params.get("q")) {
    queryInput.value = params.get("q");
    search();
  }
}

start();
