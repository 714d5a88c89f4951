# syntax=docker/dockerfile:1
# draguard: admission webhook image.  Build: docker build -t ghcr.io/draguard/draguard:0.1.0 .
#
# Stage 1 builds a virtualenv (compilers are available here in case a dependency has no
# wheel for the platform); stage 2 copies only the virtualenv onto a clean slim image, so the
# final image has no compilers, no pip cache and no sources beyond the installed package.

FROM python:3.11-slim-bookworm AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
RUN apt-get update \
 && apt-get install -y --no-install-recommends build-essential \
 && rm -rf /var/lib/apt/lists/*
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
WORKDIR /src
COPY pyproject.toml README.md ./
COPY app ./app
RUN pip install --no-cache-dir . \
 && find /opt/venv -name '__pycache__' -prune -exec rm -rf {} +

FROM python:3.11-slim-bookworm
LABEL org.opencontainers.image.title="draguard" \
      org.opencontainers.image.description="Admission webhook and linter for Kubernetes DRA objects" \
      org.opencontainers.image.licenses="Apache-2.0"
RUN groupadd --system --gid 10001 draguard \
 && useradd --system --uid 10001 --gid 10001 --no-create-home --shell /usr/sbin/nologin draguard
COPY --from=build /opt/venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1
# numeric user so Kubernetes' runAsNonRoot can verify it without /etc/passwd
USER 10001:10001
EXPOSE 8443
# /healthz over HTTPS on loopback; the certificate is not verified (it is our own process)
HEALTHCHECK --interval=30s --timeout=3s --start-period=10s --retries=3 \
  CMD ["python", "-c", "import ssl, urllib.request; urllib.request.urlopen('https://127.0.0.1:8443/healthz', context=ssl._create_unverified_context(), timeout=2)"]
ENTRYPOINT ["draguard", "serve"]
CMD ["--port=8443"]
