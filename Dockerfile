# The service image: `javakb web`, `javakb worker`, `javakb migrate` (see helm/java-kb-indexer).
FROM python:3.11-slim
WORKDIR /srv/java-kb-indexer
COPY pyproject.toml README.md ./
COPY app app
COPY hooks hooks
COPY pipeline pipeline
COPY mcp_server mcp_server
COPY migrations migrations
# Editable, so migrations/ is found beside the code.
RUN pip install --no-cache-dir -e . && useradd --system --uid 10001 javakb
USER javakb
EXPOSE 8080
ENTRYPOINT ["javakb"]
CMD ["web"]
