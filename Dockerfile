# Two images, both built FROM a base given as a build arg (default a public node image; CI passes
# the offline sandbox-base:local):
#   --target agent-server              the sandbox; copies the bundle built on the host (dist/), which
#                                      is how the control plane builds it on first use, offline
#   --target sandbox-server (default)  the control plane, built from source in a builder stage
#                                      (npm ci, npm run build): what compose.yaml builds from a clone
#   --target sandbox-server-from-host  the same control plane from the host's dist/ and node_modules
#                                      (`npm ci && npm run build` first), with no network: CI's build
# Stages a target does not need come after it, so that the classic builder, which builds every stage
# before its target, builds the offline targets offline too.
ARG BASE_IMAGE=node:20-bookworm-slim

# --- agent-server: what runs inside every sandbox (`docker build --target agent-server .`) -------
FROM ${BASE_IMAGE} AS agent-server

# The agent-server runs as root and the agent's commands (terminal tool, /api/bash) as the
# unprivileged user openhands, who owns the workspace: nothing the agent runs can read the
# agent-server's memory or data. Its session key never enters the container: the control plane
# sets only the key's SHA-256 (SESSION_API_KEY_SHA256), which opens nothing even where the agent
# can read the agent-server's environment (under gVisor any user reads /proc/N/environ). The bundle
# is an ES module; /app/package.json says so for node versions that do not detect it.
RUN useradd --create-home --shell /bin/bash openhands \
 && mkdir -p /app /data /workspace \
 && chown openhands:openhands /workspace \
 && chmod 700 /data \
 && echo '{"type":"module"}' > /app/package.json

# dist/ holds the bundle, its source map, the /docs page's assets (swagger-ui/) and the browser
# tools' driver (node_modules/playwright-core, loaded on their first use); the build context
# carries nothing else of it.
COPY dist/agent-server.js* /app/
COPY dist/swagger-ui/ /app/swagger-ui/
COPY dist/node_modules/ /app/node_modules/

WORKDIR /workspace
EXPOSE 8000
CMD ["node", "/app/agent-server.js", "--host", "0.0.0.0", "--port", "8000", "--data-dir", "/data", \
     "--agent-user", "openhands"]

# --- the control plane's common part ------------------------------------------------------------
# The control plane keeps its dependencies external (dockerode's native parts, PGlite's wasm), so
# it ships with node_modules without dev dependencies. It also carries the agent-server bundle and
# this Dockerfile, to build the sandbox image on first use.
FROM ${BASE_IMAGE} AS control-plane
WORKDIR /app
COPY package.json package-lock.json Dockerfile /app/
COPY drizzle/ /app/drizzle/
ENV HOST=127.0.0.1 PORT=3000 DATA_DIR=/var/lib/sandbox-server
VOLUME /var/lib/sandbox-server
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s \
  CMD node -e "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"
STOPSIGNAL SIGTERM
CMD ["node", "/app/dist/sandbox-server.js"]

# --- sandbox-server-from-host: the control plane from the host's build, offline -------------------
FROM control-plane AS sandbox-server-from-host
COPY node_modules/ /app/node_modules/
RUN if command -v npm >/dev/null; then npm prune --omit=dev --no-audit --no-fund; fi
COPY dist/ /app/dist/

# --- agent-server-full: the sandbox with the programs the agent's tools use (needs Debian's mirrors) --
# Chromium for the browser tools (the headless shell), tmux for the terminal, ripgrep for glob and
# grep, git and python3: `docker build --target agent-server-full -t my/agent-server-full .`, then
# AGENT_SERVER_IMAGE=my/agent-server-full. It builds on the agent-server stage, whose bundle needs
# `npm run build` on the host first; it comes after the offline targets, which the classic builder
# would otherwise make need the mirrors too.
FROM agent-server AS agent-server-full
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium-headless-shell fonts-liberation tmux ripgrep git python3 procps ca-certificates \
 && rm -rf /var/lib/apt/lists/*

# --- build: the programs built from source (needs the npm registry) -------------------------------
FROM ${BASE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json /src/
RUN npm ci --no-audit --no-fund
COPY tsconfig.json /src/
COPY scripts/ /src/scripts/
COPY src/ /src/src/
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

# --- sandbox-server: the control plane built from source, as compose.yaml runs it (the default) ---
FROM control-plane AS sandbox-server
COPY --from=build /src/node_modules/ /app/node_modules/
COPY --from=build /src/dist/ /app/dist/
