# The service image: `javakb web`, `javakb worker`, `javakb migrate` (see helm/java-kb-indexer).
# Build it with scripts/build_image (buildah), which passes BASE: any Debian-based image with Python 3.11
# and python3-venv (the default, or one made by scripts/debian_base). Every Python package is installed at
# the version pinned in constraints.txt, the file scripts/bootstrap installs from too.
ARG BASE=python:3.11-slim

# Builder: the virtual environment, the project (editable, so migrations/ is found beside the code), and
# the pipeline's C reader (pipeline/csrc) compiled with the pinned tree-sitter's runtime sources: required,
# the pipeline does not import without it, so the build stops here when it cannot be compiled.
FROM ${BASE} AS builder
# A Debian base needs python3-dev too (the official python images carry the headers).
ARG BUILD_PACKAGES="gcc libc6-dev"
RUN apt-get update && apt-get install -y --no-install-recommends ${BUILD_PACKAGES} && rm -rf /var/lib/apt/lists/*
# pip trusts the system's certificate bundle (the base's, with any CA the base was given) rather than its own.
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_CONSTRAINT=/srv/java-kb-indexer/constraints.txt \
    PIP_CERT=/etc/ssl/certs/ca-certificates.crt
WORKDIR /srv/java-kb-indexer
COPY constraints.txt requirements-nodeps.txt pyproject.toml README.md ./
# Dependencies first, against empty packages, so a source change reuses this layer.
RUN python3 -m venv /opt/venv \
 && /opt/venv/bin/pip install -q pip setuptools wheel \
 && mkdir entry app hooks pipeline mcp_server \
 && /opt/venv/bin/pip install -q -e . \
 && /opt/venv/bin/pip install -q --no-deps -r requirements-nodeps.txt
COPY scripts/build_native scripts/
COPY pipeline/csrc pipeline/csrc
RUN /opt/venv/bin/python scripts/build_native --python /opt/venv/bin/python && rm -rf .cache scripts
COPY entry entry
COPY app app
COPY hooks hooks
COPY pipeline pipeline
COPY mcp_server mcp_server
COPY migrations migrations
# The embedded default model's table, distilled from the installed MiniLM now (a minute of CPU): the root file
# system is read-only at run time, so it is read from here (JAVAKB_EMBEDDING__MODEL_CACHE, set below too).
ENV JAVAKB_EMBEDDING__MODEL_CACHE=/opt/javakb-models
RUN OPENBLAS_NUM_THREADS=1 /opt/venv/bin/python -m app.store.distilled
# Byte-code compiled now: the root file system is read-only at run time. No pip in the final image.
RUN /opt/venv/bin/python -m compileall -q /opt/venv/lib entry app hooks pipeline mcp_server \
 && /opt/venv/bin/python -c "import pipeline.chunking" \
 && /opt/venv/bin/pip uninstall -q -y pip wheel \
 && rm -rf pipeline/csrc

FROM ${BASE}
# A numeric user, so Kubernetes can verify runAsNonRoot (the chart sets runAsUser to the same number).
ARG UID=10001
RUN groupadd --system --gid ${UID} javakb \
 && useradd --system --uid ${UID} --gid ${UID} --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin javakb
COPY --from=builder /opt/venv /opt/venv
COPY --from=builder /srv/java-kb-indexer /srv/java-kb-indexer
COPY --from=builder /opt/javakb-models /opt/javakb-models
# HOME is the writable /tmp (an emptyDir under the chart): the user has no home, the root file system is read-only.
ENV PATH=/opt/venv/bin:$PATH PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 JAVAKB_HOST=0.0.0.0 HOME=/tmp \
    JAVAKB_EMBEDDING__MODEL_CACHE=/opt/javakb-models
WORKDIR /srv/java-kb-indexer
USER ${UID}:${UID}
# 8080: web (receiver, /mcp, /api/v1, /admin, /healthz, /readyz); 8081: the worker's /healthz.
EXPOSE 8080 8081
ENTRYPOINT ["javakb"]
CMD ["web"]
