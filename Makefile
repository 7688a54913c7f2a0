# Everything a fresh machine needs: `make demo` and `make test` install into .venv/ first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

# The light install: the wheel with its base dependencies only (no torch, no scipy, no onnx),
# pinned as in requirements.txt, in a virtualenv of its own, running the inference tests
# (--quantize int8 included).
LIGHT := .venv-light
LIGHT_TESTS := tests/models/test_torch_format.py tests/test_encoder.py tests/lid/test_corpus_sources.py \
	tests/models/test_laser2.py tests/cli/test_embed.py tests/cli/test_user_errors.py \
	tests/test_startup.py tests/search/test_knn.py tests/search/test_knn_cli_options.py \
	tests/mining/test_mining.py tests/mining/test_mining_fixtures.py tests/mining/test_scoring.py \
	tests/mining/test_threads.py tests/apps/test_documents.py tests/apps/test_classify_predict.py \
	tests/text/test_tokenizer.py tests/cli/test_command_loading.py tests/test_progress.py \
	tests/runtime/test_quantize.py tests/runtime/test_missing_torch.py tests/cli/test_terminal.py \
	tests/io/test_durable_outputs.py tests/io/test_output_access.py tests/io/test_damaged_embeddings.py \
	tests/io/test_sources.py tests/mining/test_unify.py tests/mining/test_mine_many_files.py \
	tests/mining/test_same_results.py tests/cli/test_many_inputs.py tests/io/test_stacked_rows.py \
	tests/lid/test_lid.py tests/lid/test_language_filter.py tests/lid/test_lang_auto.py \
	tests/lid/test_predictor.py tests/lid/test_scripts.py tests/lid/test_calibration.py \
	tests/text/test_sentences.py tests/cli/test_split.py tests/io/test_document_inputs.py \
	tests/cleaning/test_cleaning_filters.py tests/cleaning/test_prepare.py \
	tests/mining/test_mine_documents.py \
	tests/align/test_pairing_parts.py tests/align/test_align_many.py \
	tests/align/test_pair_documents.py tests/align/test_aligner.py \
	tests/align/test_pair_document_records.py \
	tests/io/test_output_clashes.py tests/mining/test_work_dir_lock.py \
	tests/cli/test_one_error_format.py tests/io/test_bad_lines.py \
	tests/mining/test_mine_progress.py tests/test_interrupt.py \
	tests/align/test_align.py
# The language-ID recipe trains with the full fastText package, which installs the same `fasttext`
# module as fasttext-predict (the tests' oracle of laser's own predictor, not in the light install):
# it gets a virtualenv of its own. The bench's rivals (py3langid, pycld2, lingua) and its baseline
# (fasttext-predict) get theirs too; none is a dependency of laser.
LID_VENV := .venv-lid
LID_TRAIN := fasttext==0.9.3 numpy==2.4.6 wordfreq==3.1.1 babel==2.19.0 tqdm==4.70.1
BENCH_LID_VENV := bench/.venv-lid
BENCH_LID := py3langid==0.4.0 pycld2==0.42 lingua-language-detector==2.1.1 fasttext-predict==0.9.2.4 \
	numpy==2.4.6
# The sentence-splitting bench's rivals (bench/split.py), in a virtualenv of their own.
BENCH_SPLIT_VENV := bench/.venv-split
BENCH_SPLIT := sentencex==1.0.32 pysbd==0.3.4 sentence-splitter==1.4 blingfire==0.1.8 numpy==2.4.6
# The sentence-alignment bench's rivals (bench/align.py, bench/align_speed.py): Vecalign built from
# its source (its Cython dynamic program) and Bertalign's modules run from theirs, in a virtualenv
# of their own. Neither is on PyPI for this Python (Bertalign's releases need 3.12): their sources
# go in bench/out/vecalign-src and bench/out/bertalign-src (git archive of each repository;
# docs/alignment.md, "Measured"), and Bleualign's documents in bench/out/bleualign_data.
BENCH_ALIGN_VENV := bench/.venv-align
BENCH_ALIGN := numpy==2.4.6 Cython==3.3.1 setuptools==84.2.1 numba==0.68.1 scipy==1.17.1 \
	faiss-cpu==1.15.1
CORPUS ?= ../shared/data/corpus
SIB200 ?= ../shared/data/sib200

# The client libraries of tests/serving/test_client_libraries.py (LangChain, LlamaIndex, Haystack),
# in a virtualenv of their own: they pin packages laser's own virtualenv pins differently.
CLIENTS := .venv-clients

.PHONY: install clients demo test light-test bench lid-model lid-held-out-model bench-lid \
	splitter-model bench-split bench-align clean

install: $(STAMP)

# fastBPE's sdist only builds from its .pyx when Cython is already present and
# pip does not isolate the build, so Cython goes in first. The editable install builds laser
# lid's C kernel in place, again when its source changes.
$(STAMP): setup.py requirements.txt laser/lid/_features.c
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --upgrade pip setuptools wheel Cython
	$(BIN)/pip install -r requirements.txt
	$(BIN)/pip install --no-build-isolation fastBPE==0.1.0
	$(BIN)/pip install --no-build-isolation --no-deps -e .
	touch $(STAMP)

clients: $(CLIENTS)/.installed

$(CLIENTS)/.installed: requirements-clients.txt
	rm -rf $(CLIENTS)
	$(PYTHON) -m venv $(CLIENTS)
	$(CLIENTS)/bin/pip install -q --upgrade pip
	$(CLIENTS)/bin/pip install -q -r requirements-clients.txt
	touch $@

demo: install
	$(BIN)/python -m laser.demo

test: install
	$(BIN)/python -m pytest -q tests

light-test: install
	rm -rf $(LIGHT) build/light-wheel
	$(BIN)/pip wheel --no-deps --no-build-isolation -q -w build/light-wheel .
	$(PYTHON) -m venv $(LIGHT)
	$(LIGHT)/bin/pip install -q -c requirements.txt build/light-wheel/laser_toolkit-*.whl pytest
	! $(LIGHT)/bin/python -c "import torch" 2>/dev/null
	! $(LIGHT)/bin/python -c "import scipy" 2>/dev/null
	! $(LIGHT)/bin/python -c "import sacremoses" 2>/dev/null
	! $(LIGHT)/bin/python -c "import onnx" 2>/dev/null
	cd tests && ../$(LIGHT)/bin/python -c "import laser, sys; sys.exit('site-packages' not in laser.__file__)"
	$(LIGHT)/bin/pytest -q -p no:cacheprovider $(LIGHT_TESTS)

bench: install
	$(BIN)/python bench/embed_speed.py

# Rebuilds models/default/laser-lid.ftz from the corpus and the translated messages of the Debian
# packages that tasks/debian_l10n_packages*.txt pin (docs/language-id.md, "The model"; apt-get
# downloads the packages into build/debs, about 900 MB), then its calibration beside it, fitted on
# the corpus dev split and its pieces (docs/language-id.md, "Probabilities you can threshold").
LID_EXTRA := build/lid-extra/debian.tsv
lid-model: $(LID_VENV)/bin/python $(LID_EXTRA)
	PYTHONPATH=$(CURDIR) $(LID_VENV)/bin/python tasks/lid_model.py $(CORPUS) --sib200 $(SIB200) \
		--extra $(LID_EXTRA) --out models/default/laser-lid.ftz
	PYTHONPATH=$(CURDIR) $(LID_VENV)/bin/python tasks/lid_calibrate.py --corpus $(CORPUS) \
		--model models/default/laser-lid.ftz

$(LID_VENV)/bin/python:
	$(PYTHON) -m venv $(LID_VENV)
	$(LID_VENV)/bin/pip install -q $(LID_TRAIN)

$(LID_EXTRA): | $(LID_VENV)/bin/python
	PYTHONPATH=$(CURDIR) $(LID_VENV)/bin/python tasks/lid_extra_text.py $(dir $(LID_EXTRA)) \
		--debs build/debs

# The shipped recipe with each language's held-out source family left out of train: the model that
# `make bench-lid` scores out of source (docs/language-id.md, "Out of source"), with its
# calibration fitted as the shipped model's.
LID_HELD_OUT := build/lid-held/laser-lid.held-out.ftz
lid-held-out-model: $(LID_VENV)/bin/python $(LID_EXTRA)
	PYTHONPATH=$(CURDIR) $(LID_VENV)/bin/python tasks/lid_model.py $(CORPUS) --sib200 $(SIB200) \
		--extra $(LID_EXTRA) --hold-out-sources --work build/lid-held --out $(LID_HELD_OUT)
	PYTHONPATH=$(CURDIR) $(LID_VENV)/bin/python tasks/lid_calibrate.py --corpus $(CORPUS) \
		--model $(LID_HELD_OUT)

# The language-ID table of docs/language-id.md: the model against py3langid, pycld2 and lingua
# (with the out-of-source, short-line and calibration tables where `make lid-held-out-model` ran).
# laser's modules compiled first, as pip compiles an installed package: where the environment
# forbids writing bytecode (PYTHONDONTWRITEBYTECODE), a checkout recompiles them at every start.
bench-lid: install
	$(PYTHON) -m venv $(BENCH_LID_VENV)
	$(BENCH_LID_VENV)/bin/pip install -q $(BENCH_LID)
	$(BIN)/python -m compileall -q laser
	$(BENCH_LID_VENV)/bin/python bench/lid.py $(CORPUS) $(SIB200) --laser "$(CURDIR)/$(BIN)/laser" \
		$(if $(wildcard $(LID_HELD_OUT)),--held-out-model $(LID_HELD_OUT))

# Rebuilds laser/data/sentence-splitter.tsv.xz from the corpus (docs/sentence-splitting.md).
splitter-model: install
	$(BIN)/python tasks/splitter_model.py $(CORPUS) --sib200 $(SIB200) --per-language 2000 \
		--english 20000 --epochs 3 --out laser/data/sentence-splitter.tsv.xz

# The sentence-splitting table of docs/sentence-splitting.md: laser against sentencex, pysbd,
# sentence-splitter and blingfire, in one run.
bench-split: install
	$(PYTHON) -m venv $(BENCH_SPLIT_VENV)
	$(BENCH_SPLIT_VENV)/bin/pip install -q $(BENCH_SPLIT)
	$(BENCH_SPLIT_VENV)/bin/python bench/split.py $(SIB200) $(CORPUS) \
		--markdown bench/out/split.md

# The sentence-alignment tables of docs/alignment.md: laser align, Vecalign and Bertalign on
# Bleualign's documents, then the time and memory curve from 1,000 to 100,000 sentences.
bench-align: install
	$(PYTHON) -m venv $(BENCH_ALIGN_VENV)
	$(BENCH_ALIGN_VENV)/bin/pip install -q $(BENCH_ALIGN)
	$(BENCH_ALIGN_VENV)/bin/pip install -q --no-build-isolation --no-deps bench/out/vecalign-src
	nice -n 10 $(BIN)/python bench/align.py bench/out/bleualign_data --vecalign-cli \
		--vecalign-deletions 0.05 0.1 0.3 --bertalign-skips -0.5 -0.4 -0.3 -0.2 -0.05 0
	nice -n 10 $(BIN)/python bench/align_speed.py --corpus $(CORPUS) --embed-up-to 0 \
		--bertalign-up-to 30000
	nice -n 10 $(BIN)/python bench/align_speed.py --corpus $(CORPUS) --sizes 1000 3000 10000 30000 \
		--embed-up-to 30000 --vecalign-up-to 0 --bertalign-up-to 0

clean:
	rm -rf $(VENV) $(LIGHT) $(CLIENTS) $(LID_VENV) $(BENCH_LID_VENV) $(BENCH_SPLIT_VENV) \
		$(BENCH_ALIGN_VENV) build \
		*.egg-info
