# The control plane as a container (docker-compose.yml). Sandboxes are NOT run inside it: it talks
# to the host's engine through the mounted socket, and the sandbox image is built on the host
# (npm run setup, or sandbox-image/build.sh).
FROM node:20-bookworm-slim AS build
WORKDIR /app
# better-sqlite3 compiles its native addon when no prebuilt binary can be fetched.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY proto ./proto
COPY src ./src
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
WORKDIR /app
# Debian's CPython: its parser gates intake (it compiles to an AST, never runs skill code).
RUN apt-get update && apt-get install -y --no-install-recommends python3 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production SKILL_ENGINE_HOST=0.0.0.0
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY proto ./proto
COPY package.json ./
EXPOSE 50051
CMD ["node", "dist/main.js"]
