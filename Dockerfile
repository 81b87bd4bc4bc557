# Sluice: multi-stage image. Both stages run deploy/build.sh, the same script
# test/integration/deploy/build-script.test.ts runs in a clean directory (no image can be
# built on the project's own machines: they have no Docker engine or registry access).
#   docker build -t sluice .
#   docker run -p 8080:8080 -v sluice-data:/data sluice             # HTTP server
#   docker run -v sluice-data:/data sluice node dist/src/worker-main.js   # batch worker

# Node 24 (active LTS). No compiler: every native module ships its binary (better-sqlite3 13,
# onnxruntime-node, ffmpeg).
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc tsconfig.json tsconfig.build.json ./
COPY deploy/build.sh deploy/sqlite-for-node20.mjs deploy/
COPY src src
COPY console console
RUN sh deploy/build.sh compile

FROM node:24-bookworm-slim AS runtime
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
COPY deploy/build.sh deploy/prune-onnx-binaries.mjs deploy/sqlite-for-node20.mjs deploy/
RUN sh deploy/build.sh runtime && rm -rf /root/.npm
COPY --from=build /app/dist dist
COPY sluice.example.yaml ./
RUN mkdir -p /data && chown node:node /data
USER node
ENV NODE_ENV=production DATA_DIR=/data HOST=0.0.0.0 PORT=8080
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=5s CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# SIGTERM reaches node directly (exec form), which drains within SHUTDOWN_GRACE_SECONDS.
CMD ["node", "dist/src/main.js"]
