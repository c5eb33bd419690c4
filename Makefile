# AICS Workbook — `make lab` to open the workbook, `make test` to run everything.
# Note: MPLBACKEND is deliberately left alone (see shared ARCHITECTURE.md:
# MPLBACKEND=Agg makes notebook figure cells lose their text/plain output).

SHELL  := /bin/bash
VENV   := .venv
PYTHON := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

# JupyterLab refuses to start as root without --allow-root.
ALLOW_ROOT := $(shell [ "$$(id -u)" = 0 ] && echo --allow-root)

.PHONY: venv lab lab-instructor notebooks test test-unit test-notebooks bench clean release autograde

venv: $(STAMP)

$(PYTHON):
	python3 -m venv $(VENV)

# Reinstalls only when pyproject.toml changes (or the venv is new). Also once
# when aicslib/__init__.py first appears: an editable install made before it
# existed maps aicslib as a namespace package and would never run __init__.py.
# The `grading` extra is nbgrader: `make release` / `make autograde` and tests/grading/ need it;
# `mpi` (mpi4py + MPICH) and `bindings` (SWIG, pybind11) serve notebooks 19 and 11 and their tests;
# `browser` (Playwright) drives the browser tests.
$(STAMP): pyproject.toml $(wildcard aicslib/__init__.py) | $(PYTHON)
	$(PYTHON) -m pip install -e '.[test,grading,mpi,bindings,browser]'
	@# .gitattributes names the nbstripout filter; this defines it for this clone (outputs never committed)
	@if git rev-parse --git-dir >/dev/null 2>&1; then $(VENV)/bin/nbstripout --install; fi
	touch $@

# Students: `make lab` opens their own copy of the workbook, student/ (the release: exercises blank,
# tests locked; never overwritten once there), with nbgrader's instructor tools hidden
# (jupyter/student/). Instructors: `make lab-instructor` opens the solved notebooks/.
STUDENT_DIR ?= student
STUDENT_RELEASE := build/student-release
STUDENT_RELEASE_STAMP := $(STUDENT_RELEASE)/.stamp
lab: venv $(STUDENT_RELEASE_STAMP)
	$(PYTHON) -m workbook.student_copy --release $(STUDENT_RELEASE)/$(ASSIGNMENT) --dest $(STUDENT_DIR)
	JUPYTER_CONFIG_PATH="$(abspath jupyter/student)" $(VENV)/bin/jupyter lab --notebook-dir=$(STUDENT_DIR) \
	  --no-browser --ip=127.0.0.1 $(ALLOW_ROOT)

lab-instructor: venv
	$(VENV)/bin/jupyter lab --notebook-dir=notebooks --no-browser --ip=127.0.0.1 $(ALLOW_ROOT)

# Sync the jupytext sources notebooks/NN-topic.py (py:percent, the source of
# truth) -> notebooks/NN-topic.ipynb; pairing and filters: notebooks/jupytext.toml.
# jupytext --sync takes the more recently modified file of each pair as input.
notebooks: venv
	$(VENV)/bin/jupytext --sync notebooks/*.ipynb

# `make test` (what CI runs; its time on 2 cores is in the README): lint, the unit tests and the grader
# tests (every instructor notebook runs once, every answer swapped into its exercise inside that
# kernel, nbgrader end to end on a fixture chapter), then the student release in a real browser.
# `make test-full`: every notebook in its full setting, and the whole autograde matrix.
PYTEST := $(PYTHON) -m pytest -p no:cacheprovider --durations=20
# one worker more than the cores: the unit tests share the machine with the browser tests, and many
# of them wait on a kernel, a subprocess or MPI ranks part of the time
TEST_JOBS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) + 1 )))
# The student release the tests check (stripping) and run (in the browser): built once per run.
TEST_RELEASE := build/test-release

# The release both use is built once (a stamp). Then the unit tests and the browser tests run side by
# side (the browser tests mostly wait on their kernels and pages, so alone they keep about one of the
# two cores busy); each prints its whole report when it ends (--output-sync), the unit tests first.
# Both share the cores with each other and with their own parallel workers: one BLAS thread per
# process (OpenBLAS's threads spin while they wait, and on a busy machine that takes the CPU the
# other processes need; make autograde does the same).
test: lint test-release
	@echo "unit tests and browser tests, side by side: each report is printed when it ends"
	@OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 \
	  $(MAKE) --no-print-directory -j2 --output-sync=target test-unit test-browser

.PHONY: test-release
test-release: $(TEST_RELEASE)/.stamp

lint: venv
	$(PYTHON) -m ruff check .

# Skips only while tests/ holds no test files at all; once tests exist,
# "no tests collected" (pytest exit 5) is a failure like any other.
test-unit: venv test-release
	@if find tests -name 'test_*.py' -o -name '*_test.py' 2>/dev/null | grep -q .; then \
	  echo "AICS_FAST=1 $(PYTEST) tests --ignore=tests/browser -m 'not full' -n $(TEST_JOBS) --dist worksteal --timeout=900 -q"; \
	  AICS_TEST_RELEASE=$(abspath $(TEST_RELEASE))/$(ASSIGNMENT) AICS_FAST=1 \
	    $(PYTEST) tests --ignore=tests/browser -m 'not full' -n $(TEST_JOBS) --dist worksteal --timeout=900 -q; \
	else \
	  echo "test-unit: no test files in tests/ yet, skipping"; \
	fi

# Every notebook top to bottom under nbval; NOTEBOOK_SETTING=full for the chapters' full setting.
NOTEBOOK_SETTING ?= fast
test-notebooks: venv
	@if find notebooks -name '*.ipynb' -not -path '*/.ipynb_checkpoints/*' 2>/dev/null | grep -q .; then \
	  $(if $(filter fast,$(NOTEBOOK_SETTING)),AICS_FAST=1,env -u AICS_FAST) $(PYTEST) --nbval-lax --nbval-current-env \
	    --nbval-cell-timeout=$(if $(filter fast,$(NOTEBOOK_SETTING)),300,1800) notebooks/ -q; \
	else \
	  echo "test-notebooks: no notebooks in notebooks/ yet, skipping"; \
	fi

# Runs every chapter in its full and its quick setting (no cell may raise) and records the times
# each chapter's first cell prints (notebooks/run_times.json), then the whole autograde matrix.
test-full: venv
	$(PYTHON) tools/time_notebooks.py --setting full
	$(PYTHON) tools/time_notebooks.py --setting fast
	AICS_FAST=1 $(PYTEST) tests/grading -m full -q --timeout=3600

# Real-browser tests (tests/browser/, run only here; test-unit ignores them): JupyterLab in headless
# Chromium opens the student release of every notebook, Run All (unanswered exercises report and
# the cells after them use the references), every widget moved and checked, Chinese rendering
# checked, on two workers. Where no browser can run (outside CI) the release runs under nbclient.
# Screenshots and per-notebook reports: test-artifacts/browser/. Installs what is missing where it
# can: playwright (the `browser` extra) and, as root with apt-get, Debian's chromium and
# fonts-noto-cjk; where it cannot, the tests are reported as skipped with the reason (a failure
# under CI=true).
BROWSER_APT := chromium fonts-noto-cjk
.PHONY: test-browser test-full lint
test-browser: venv test-release
	@$(PYTHON) -c 'import playwright' 2>/dev/null || $(PYTHON) -m pip install -q -e '.[browser]' || \
	  echo "test-browser: could not install playwright (pip install -e '.[browser]'): browser tests will be skipped"
	@if ! { command -v chromium || command -v chromium-browser; } >/dev/null 2>&1 || ! fc-list :lang=zh 2>/dev/null | grep -q .; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "apt-get install -y $(BROWSER_APT)"; \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(BROWSER_APT) >/dev/null 2>&1 || \
	    { apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(BROWSER_APT) >/dev/null; } || \
	    echo "test-browser: apt-get could not install $(BROWSER_APT): browser tests will be skipped"; \
	  else \
	    echo "test-browser: Chromium or a Chinese font is missing and cannot be installed here (needs root with apt-get: apt-get install $(BROWSER_APT)): browser tests will be skipped"; \
	  fi; \
	fi
	AICS_BROWSER_NOTEBOOKS=$(abspath $(TEST_RELEASE))/$(ASSIGNMENT) AICS_FAST=1 \
	  $(PYTEST) tests/browser -q -n 2 --dist worksteal --timeout=900

# ---------------------------------------------------------------------------
# Course workflow (nbgrader; configuration in nbgrader_config.py, read from the repository root).
# The course directory is a scratch folder: source/ gets the instructor notebooks, nbgrader keeps
# its gradebook.db there. Every target rebuilds it from notebooks/*.ipynb, so it is never stale.

ASSIGNMENT  := workbook
NBGRADER    := $(VENV)/bin/nbgrader
COURSE_DIR  ?= build/course
RELEASE_DIR ?= release
GRADES_DIR  ?= grades
COURSE_NOTEBOOKS ?= notebooks
NOTEBOOKS   := $(sort $(wildcard notebooks/[0-9][0-9]-*.ipynb))
# nbgrader runs helper programs (alembic) from PATH: put the venv's bin/ first.
RUN_NBGRADER = PATH="$(abspath $(VENV))/bin:$$PATH" AICS_COURSE_DIR="$(abspath $(COURSE_DIR))" $(NBGRADER)

# The release the tests check and run, rebuilt when an instructor notebook changes.
$(TEST_RELEASE)/.stamp: $(NOTEBOOKS) nbgrader_config.py workbook/student_copy.py | venv
	@$(MAKE) -s release RELEASE_DIR=$(TEST_RELEASE) COURSE_DIR=$(TEST_RELEASE)-course
	touch $@

# The release the student copy is made from, rebuilt when an instructor notebook changes.
$(STUDENT_RELEASE_STAMP): $(NOTEBOOKS) | venv
	$(MAKE) -s release RELEASE_DIR=$(STUDENT_RELEASE) COURSE_DIR=build/student-course
	touch $@

# Student version: solutions replaced by `raise NotImplementedError()`, test cells locked, hidden
# tests removed. Students open $(RELEASE_DIR)/$(ASSIGNMENT)/ in JupyterLab (aicslib and the data are
# found from the installed package, whatever the folder).
release: venv
	@rm -rf $(COURSE_DIR) && mkdir -p $(COURSE_DIR)/source/$(ASSIGNMENT)
	cp $(NOTEBOOKS) $(COURSE_DIR)/source/$(ASSIGNMENT)/
	$(RUN_NBGRADER) generate_assignment $(ASSIGNMENT) --force
	$(PYTHON) -m workbook.student_copy --handout --release $(COURSE_DIR)/release/$(ASSIGNMENT) \
	  --dest $(RELEASE_DIR)/$(ASSIGNMENT)
	@echo "student release: $(RELEASE_DIR)/$(ASSIGNMENT)/ ($$(ls $(RELEASE_DIR)/$(ASSIGNMENT) | wc -l) notebooks)"

# Grades a class: SUBMISSIONS/<student_id>/<NN-topic>.ipynb, the notebooks students handed in
# (names unchanged; a missing notebook scores 0). Students are graded in parallel (JOBS, default the
# cores + 1) in the quick setting; FULL=1 for the chapters' full setting. Writes, and keeps across runs,
# $(GRADES_DIR)/grades_by_exercise.csv (a column per exercise), grades.csv (totals),
# feedback/<student_id>/*.html and gradebook.db: see workbook/autograde.py.
autograde: venv
	@if [ -z "$(SUBMISSIONS)" ] || [ ! -d "$(SUBMISSIONS)" ]; then \
	  echo "usage: make autograde SUBMISSIONS=dir [FULL=1] [JOBS=n] [STUDENT=glob]   (dir/<student_id>/<NN-topic>.ipynb)"; exit 2; fi
	$(PYTHON) -m workbook.autograde "$(SUBMISSIONS)" --grades-dir "$(GRADES_DIR)" --notebooks "$(COURSE_NOTEBOOKS)" \
	  $(if $(JOBS),--jobs $(JOBS)) $(if $(FULL),--full) $(if $(STUDENT),--student "$(STUDENT)") \
	  $(if $(CELL_TIMEOUT),--cell-timeout $(CELL_TIMEOUT))

bench: venv
	@set -e; found=0; \
	for f in benchmarks/bench_*.py; do \
	  [ -e "$$f" ] || continue; found=1; \
	  echo "== $$f"; $(PYTHON) "$$f"; \
	done; \
	[ $$found = 1 ] || echo "bench: no benchmarks/bench_*.py yet"

clean:
	rm -rf build dist *.egg-info .pytest_cache .hypothesis notebooks/_work test-artifacts $(RELEASE_DIR)
	find . -path ./$(VENV) -prune -o \( -name __pycache__ -o -name .ipynb_checkpoints \) -type d -print0 | xargs -0 rm -rf
