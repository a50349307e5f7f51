# syntax=docker/dockerfile:1
#
# toolsel images.
#   GPU (default target): docker build -t toolsel:gpu .
#     CUDA 12 + cuDNN runtime, Node 20, ONNX Runtime's CUDA execution provider installed at build time.
#   CPU:                  docker build --target cpu -t toolsel:cpu .
#
# Models and indexes are volumes: mount model directories under /models and built indexes at
# /data/indexes. Run on a GPU node with:
#   docker run --gpus all -p 8080:8080 -v $PWD/models:/models:ro -v $PWD/indexes:/data/indexes \
#     -e TOOLSEL_PLANNER=llm:onnx:/models/qwen3-1.7b -e TOOLSEL_SELECTOR=llm:onnx:/models/qwen3-1.7b \
#     toolsel:gpu
# The GPU image's base (CUDA 12.8) needs an NVIDIA driver >= 570 on the host: with an older one
# docker refuses to start it ("unsatisfied condition: cuda>=12.8"). ONNX Runtime 1.30's CUDA
# provider wants any CUDA 12.x with cuDNN 9, so for a 12.x driver >= 525 build on an older base:
#   docker build --build-arg CUDA_IMAGE=nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04 -t toolsel:gpu .
# See README.md ("Docker") for the CPU image and the configuration variables.

ARG NODE_IMAGE=node:20.19.5-bookworm-slim
ARG CUDA_IMAGE=nvidia/cuda:12.8.1-cudnn-runtime-ubuntu24.04

# ---- dependencies (production only), native addons compiled here -------------------------------
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
# onnxruntime-node's postinstall would download CUDA libraries; the CPU provider is bundled, and
# the GPU stage below installs the CUDA provider explicitly.
ENV ONNXRUNTIME_NODE_INSTALL=skip ONNXRUNTIME_NODE_INSTALL_CUDA=skip
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
# Scripts are off for every package, then the two that must build are rebuilt (hnswlib-node's
# node-gyp build, esbuild's binary check for tsx): the same allow-list as package.json allowScripts.
RUN npm ci --omit=dev --ignore-scripts \
 && npm rebuild hnswlib-node esbuild \
 && npm cache clean --force

# ---- compiled TypeScript (dist/): the images run it, not the tsx loader --------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts && npm cache clean --force
COPY tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY scripts/build-dist.mjs ./scripts/
COPY src ./src
RUN node scripts/build-dist.mjs

FROM deps AS deps-gpu
# Needs network at build time: fetches the CUDA 12 execution provider for onnxruntime-node.
RUN ONNXRUNTIME_NODE_INSTALL=cuda12 node node_modules/onnxruntime-node/script/install.js

# ---- CPU image -----------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS cpu
WORKDIR /app
# Listens on all interfaces, so it needs an API key at run time: -e TOOLSEL_ADMIN_KEY=<16+ chars>
# (writes) and -e TOOLSEL_READ_KEYS=<key>,<key> (queries). Without a key serve refuses to start
# unless -e TOOLSEL_INSECURE_NO_AUTH=true (something in front authenticates). See README, Security.
ENV NODE_ENV=production \
    TOOLSEL_HOST=0.0.0.0 \
    TOOLSEL_PORT=8080 \
    TOOLSEL_INDEX_DIR=/data/indexes \
    TOOLSEL_SNAPSHOT_DIR=/data/snapshots
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY bin ./bin
# dist/ only (no src/): bin/toolsel.mjs runs it without the tsx loader.
COPY --from=build /app/dist ./dist
# The committed benchmark report the playground links to (GET /ui/report; package.json "files").
COPY bench/results/default/report.html ./bench/results/default/report.html
# The default model's dense features read GloVe word vectors: converted once here into
# node_modules/.cache/toolsel (read-only at run time), not at every container start.
COPY scripts/prepare-word-vectors.mjs ./scripts/
RUN node scripts/prepare-word-vectors.mjs \
 && mkdir -p /data/indexes /data/snapshots /models && chown -R node:node /data /models
USER node
EXPOSE 8080
VOLUME ["/data/indexes", "/data/snapshots", "/models"]
HEALTHCHECK --interval=15s --timeout=3s --start-period=120s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.TOOLSEL_PORT||8080)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["node", "bin/toolsel.mjs"]
CMD ["serve"]

# ---- GPU image (default) -------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS node-runtime

FROM ${CUDA_IMAGE} AS gpu
WORKDIR /app
# Node from the official image: one binary that needs only glibc (2.28 or newer), libstdc++ and
# libgcc_s, which the CUDA image's Ubuntu has; the native addons of deps (Debian 12, glibc 2.36)
# run on Ubuntu 22.04 (glibc 2.35 has every symbol version they use) and 24.04.
COPY --from=node-runtime /usr/local/bin/node /usr/local/bin/node
# Needs -e TOOLSEL_ADMIN_KEY (and TOOLSEL_READ_KEYS) at run time, as the CPU image above.
ENV NODE_ENV=production \
    TOOLSEL_HOST=0.0.0.0 \
    TOOLSEL_PORT=8080 \
    TOOLSEL_INDEX_DIR=/data/indexes \
    TOOLSEL_SNAPSHOT_DIR=/data/snapshots \
    TOOLSEL_DEVICE=cuda \
    TOOLSEL_ONNX_DEVICE=cuda
COPY --from=deps-gpu /app/node_modules ./node_modules
COPY package.json ./
COPY bin ./bin
COPY --from=build /app/dist ./dist
COPY bench/results/default/report.html ./bench/results/default/report.html
COPY scripts/prepare-word-vectors.mjs ./scripts/
RUN node scripts/prepare-word-vectors.mjs \
 && groupadd --system toolsel \
 && useradd --system --gid toolsel --home-dir /app --shell /usr/sbin/nologin toolsel \
 && mkdir -p /data/indexes /data/snapshots /models \
 && chown -R toolsel:toolsel /data /models
USER toolsel
EXPOSE 8080
VOLUME ["/data/indexes", "/data/snapshots", "/models"]
HEALTHCHECK --interval=15s --timeout=3s --start-period=300s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.TOOLSEL_PORT||8080)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["node", "bin/toolsel.mjs"]
CMD ["serve"]
