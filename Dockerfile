# syntax=docker/dockerfile:1
# draguard: admission webhook and linter image.  Build: docker build -t ghcr.io/draguard/draguard:0.1.0 .
#
# Stage 1 installs the locked dependencies (requirements.lock: exact versions with hashes, made by
#   uv pip compile pyproject.toml --universal --python-version 3.11 --generate-hashes -o requirements.lock
# after every dependency change in pyproject.toml) and draguard itself, without its
# dependencies, into a virtualenv that has no pip.  Stage 2 copies only that virtualenv onto the
# same base and removes pip and setuptools from the base's own Python: the final image has no
# package installer, no compiler, no sources beyond the installed package.
#
# The base is pinned by digest so that a rebuild gets the same bytes.  The digest could not be
# checked from the environment this file was written in (no access to the image registry):
# verify it, and refresh it on Python patch releases, with
#   docker buildx imagetools inspect python:3.11-slim-bookworm
# and pass another base with --build-arg PYTHON_IMAGE=... when needed.
ARG PYTHON_IMAGE=python:3.11-slim-bookworm@sha256:a36c24f9cbdf4fd0f52d67f0823eeac19c2028c637cecc392d97f980d4fec56b

FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
# the virtualenv gets no pip of its own: the base's pip installs into it (--python)
RUN python -m venv --without-pip /opt/venv
COPY requirements.lock ./
# wheels only (every locked dependency has them for linux): nothing is compiled here
RUN pip --python /opt/venv/bin/python install --no-cache-dir --require-hashes --only-binary=:all: \
        -r requirements.lock
COPY pyproject.toml README.md ./
COPY app ./app
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels . \
 && pip --python /opt/venv/bin/python install --no-cache-dir --no-deps /wheels/*.whl \
 && find /opt/venv -name '__pycache__' -prune -exec rm -rf {} + \
 && /opt/venv/bin/python -m compileall -q -j 0 --invalidation-mode unchecked-hash /opt/venv
# ^ bytecode made once here, with hashes instead of timestamps (so the image's bytes are the same
#   on every rebuild) and never re-checked at run time: without it every `docker run IMAGE lint`
#   compiles draguard and its dependencies from source first (1.63 s against 0.74 s of CPU for
#   one lint), since the read-only, non-root container cannot write __pycache__ either

FROM ${PYTHON_IMAGE}
LABEL org.opencontainers.image.title="draguard" \
      org.opencontainers.image.description="Admission webhook and linter for Kubernetes DRA objects" \
      org.opencontainers.image.licenses="Apache-2.0"
# no package installer at run time: pip and setuptools leave the base's Python
RUN python -m pip uninstall --yes --no-cache-dir pip setuptools wheel \
 && groupadd --system --gid 10001 draguard \
 && useradd --system --uid 10001 --gid 10001 --no-create-home --shell /usr/sbin/nologin draguard
COPY --from=build /opt/venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1
# numeric user so Kubernetes' runAsNonRoot can verify it without /etc/passwd
USER 10001:10001
EXPOSE 8443
# No HEALTHCHECK: Kubernetes ignores it (the manifests' probes call /healthz and /readyz), and
# a fixed command cannot know the port, --client-ca or --health-port a deployment chooses.
HEALTHCHECK NONE
# The program is the entrypoint, the webhook the default command: `docker run IMAGE` serves,
# `docker run -v "$PWD:/work" -w /work IMAGE lint manifests/` lints (CI), and so does any other
# sub-command — no --entrypoint needed.  The Deployment's args start with `serve`.
ENTRYPOINT ["draguard"]
CMD ["serve", "--port=8443"]
