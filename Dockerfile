# The service image: `javakb web`, `javakb worker`, `javakb migrate` (see helm/java-kb-indexer).

# The pipeline's C reader (pipeline/csrc), compiled with the runtime sources of the pinned tree-sitter
# (scripts/build_native downloads its sdist); only the built module goes into the image.
FROM python:3.11-slim AS native
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev && rm -rf /var/lib/apt/lists/*
WORKDIR /build
COPY pyproject.toml ./
COPY scripts/build_native scripts/
COPY pipeline/csrc pipeline/csrc
RUN python scripts/build_native --python python

FROM python:3.11-slim
WORKDIR /srv/java-kb-indexer
COPY pyproject.toml README.md ./
COPY app app
COPY hooks hooks
COPY pipeline pipeline
COPY --from=native /build/pipeline/_native.*.so pipeline/
COPY mcp_server mcp_server
COPY migrations migrations
# Editable, so migrations/ is found beside the code.
RUN pip install --no-cache-dir -e . && useradd --system --uid 10001 javakb
USER javakb
EXPOSE 8080
ENTRYPOINT ["javakb"]
CMD ["web"]
