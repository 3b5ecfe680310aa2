# The agent-server sandbox image. The program is bundled on the host (`npm run build`) and copied in,
# so the build needs no network: CI builds FROM the offline base (BASE_IMAGE=sandbox-base:local).
ARG BASE_IMAGE=node:20-bookworm-slim
FROM ${BASE_IMAGE}

# An unprivileged user owning the workspace and the data directory. A named volume mounted at /data
# starts as a copy of this directory, so it inherits the ownership. The bundle is an ES module;
# /app/package.json says so for node versions that do not detect it.
RUN useradd --create-home --shell /bin/bash openhands \
 && mkdir -p /app /data /workspace \
 && chown openhands:openhands /data /workspace \
 && echo '{"type":"module"}' > /app/package.json

# dist/ holds the bundle, its source map and the /docs page's assets (swagger-ui/); the build
# context carries nothing else of it.
COPY dist/ /app/

USER openhands
WORKDIR /workspace
EXPOSE 8000
CMD ["node", "/app/agent-server.js", "--host", "0.0.0.0", "--port", "8000", "--data-dir", "/data"]
