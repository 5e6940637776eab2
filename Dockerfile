# syntax=docker/dockerfile:1
#
# The proxy's image: the pix-checkout-server package, packed from this repository and installed as a
# merchant installs it (production dependencies only), run by an unprivileged numeric user.
#
#   docker build -t pix-checkout-server .
#   docker run --env-file proxy.env -p 8787:8787 pix-checkout-server            # serve
#   docker run --rm --env-file proxy.env pix-checkout-server doctor --create     # any command
#
# Not built on the machines this repository is developed on (no container daemon, no base images):
# what the image runs is tested instead (test/e2e/package.test.ts installs the packed tarball with
# --omit=dev in an empty folder and serves from there against Postgres). docs/deployment.md,
# "What was not tested here", says what that leaves untested. deploy/compose.yaml runs two instances of it.
# No secret is baked in: the configuration comes from the environment at run time.

# Pin by digest in production (node:20-bookworm-slim@sha256:…): the tag moves.
ARG NODE_IMAGE=node:20-bookworm-slim

# 1. Build and pack: the repository's own lockfile, the build, then both tarballs (scripts/pack.ts).
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run pack -- --destination /packages

# 2. Install the server package alone into an empty app folder, production dependencies only (no
#    tsx, no build tools), then its optional peers (lit, @lit-labs/ssr, at the ranges the package
#    names): the proxy renders the payment's first screen a script-tag page's head asks for. Same
#    base image as the runtime: libsql's native binary matches its libc.
FROM ${NODE_IMAGE} AS install
WORKDIR /app
COPY --from=build /packages/ /packages/
RUN printf '{"name":"pix-checkout-proxy","private":true}\n' > package.json \
 && npm install --omit=dev --no-audit --no-fund /packages/pix-checkout-server-*.tgz \
 && npm install --omit=dev --no-audit --no-fund $(node -p "Object.entries(require('pix-checkout-server/package.json').peerDependencies).map(([name, range]) => name + '@' + range).join(' ')") \
 && rm -rf /root/.npm

# 3. Run: node_modules and the lockfile npm wrote in step 2, nothing else.
FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8787 \
    PIX_DATA_DIR=/data \
    PIX_TOKEN_FILE=/data/partner-token.json \
    PATH=/app/node_modules/.bin:$PATH
WORKDIR /app
COPY --from=install /app /app
# The SQLite store's folder (unused with PIX_DATABASE_URL) and the command line's token file; the
# user owns it, nothing else.
RUN mkdir /data && chown 10001:10001 /data
USER 10001:10001
EXPOSE 8787
# Liveness only: /health answers while the process runs. /ready (the store and the partner) is for
# the load balancer; restarting on it would loop during a partner outage.
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8787)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# The proxy stops gracefully on SIGTERM (streams end, requests in flight finish, the store closes);
# give it longer than its grace period (docker stop -t, compose's stop_grace_period).
STOPSIGNAL SIGTERM
ENTRYPOINT ["pix-checkout"]
CMD ["serve"]
