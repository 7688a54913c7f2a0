# Everything a fresh machine needs: `make demo` and `make test` install into .venv/ first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo test bench clean

install: $(STAMP)

# fastBPE's sdist only builds from its .pyx when Cython is already present and
# pip does not isolate the build, so Cython goes in first.
$(STAMP): setup.py requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --upgrade pip setuptools wheel Cython
	$(BIN)/pip install -r requirements.txt
	$(BIN)/pip install --no-build-isolation fastBPE==0.1.0
	$(BIN)/pip install --no-build-isolation --no-deps -e .
	touch $(STAMP)

demo: install
	$(BIN)/python -m laser.demo

test: install
	$(BIN)/python -m pytest -q tests

bench: install
	$(BIN)/python bench/embed_speed.py

clean:
	rm -rf $(VENV) build *.egg-info
