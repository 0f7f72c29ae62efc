# syntax=docker/dockerfile:1
FROM python:3.11-slim AS runtime

# Bound to 0.0.0.0, the server refuses to start without a DURAK_SECRET_KEY of at least 32 bytes:
#   docker run -e DURAK_SECRET_KEY=$(openssl rand -hex 32) -p 8000:8000 durak-peak
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    DURAK_HOST=0.0.0.0 \
    DURAK_PORT=8000 \
    DURAK_DATABASE_URL=sqlite+aiosqlite:////srv/durak/data/durak.sqlite3

WORKDIR /srv/durak
# The only writable place for the app user: the SQLite file of the embedded default.
RUN useradd --system --create-home --uid 10001 durak \
    && mkdir -p /srv/durak/data \
    && chown durak /srv/durak/data

# Dependencies from the lock only (pinned, hash-checked, wheels), then the project without its
# dependencies, built by the locked setuptools.
COPY requirements.lock ./
RUN pip install --no-cache-dir --require-hashes --only-binary :all: -r requirements.lock
COPY pyproject.toml README.md alembic.ini ./
COPY app ./app
COPY migrations ./migrations
COPY web ./web
RUN pip install --no-cache-dir --no-deps --no-build-isolation .

USER 10001
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["python", "-c", "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8000/api/health', timeout=2).status == 200 else 1)"]
# Applies the migrations, then serves (docker-compose.yml also runs them once in "migrate").
CMD ["python", "-m", "app"]
