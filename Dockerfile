# The cdc worker: `docker compose -f docker/compose.yaml up` builds it from the repository.
FROM python:3.11-slim
WORKDIR /src
COPY pyproject.toml README.md ./
COPY cdc ./cdc
RUN pip install --no-cache-dir . && rm -rf /src/build
WORKDIR /
EXPOSE 8083
CMD ["cdc", "distributed", "/etc/cdc/worker.properties"]
