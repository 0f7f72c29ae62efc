// The service worker: the app shell from the network when there is one (always the deployed files)
// and from this cache when there is none, so the game installed on a phone's home screen opens
// offline and says "no connection — reconnecting" (main.js) until the network is back. The API,
// the lobby's event stream and the table's websocket are never cached: they go to the server or fail.
const CACHE = 'durak-shell-v2';
// Fetched when the worker installs: the lobby opens offline from these alone, so they are every
// module that main.js and the lobby import, checked by tests/web/test_shell_files.py (a module
// missing here stops main.js from running at all offline, until the page's own files are kept).
// The rest of the client (other pages, the table's parts) is kept as the player meets it.
const SHELL = [
  '/',
  '/css/app.css',
  '/js/main.js',
  '/js/api.js',
  '/js/auth.js',
  '/js/cards.js',
  '/js/dom.js',
  '/js/fairness.js',
  '/js/header.js',
  '/js/i18n.js',
  '/js/icons.js',
  '/js/integrity.js',
  '/js/notices.js',
  '/js/notify.js',
  '/js/playflow.js',
  '/js/rating.js',
  '/js/rules.js',
  '/js/session.js',
  '/js/toast.js',
  '/js/pages/lobby.js',
  '/js/table/describe.js',
  '/js/table/reasons.js',
  '/js/table/render.js',
  '/i18n/en.json',
  '/i18n/ru.json',
  '/i18n/az.json',
  '/i18n/et.json',
  '/i18n/fi.json',
  '/favicon.svg',
  '/manifest.webmanifest',
];
const NEVER = /^\/(api|ws|metrics)(\/|$)/;

function keep(paths) {
  return caches
    .open(CACHE)
    .then((cache) => Promise.allSettled(paths.map((path) => cache.add(new Request(path, { cache: 'no-cache' })))));
}

self.addEventListener('install', (event) => {
  // One by one (keep): a file that moved must not stop the others from being kept.
  event.waitUntil(keep(SHELL).then(() => self.skipWaiting()));
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((names) => Promise.all(names.filter((name) => name !== CACHE).map((name) => caches.delete(name))))
      .then(() => self.clients.claim()),
  );
});

// The page that registered the worker names the files it loaded before the worker ran (main.js).
self.addEventListener('message', (event) => {
  const data = event.data || {};
  if (data.type !== 'keep' || !Array.isArray(data.paths)) return;
  const paths = data.paths.filter((path) => typeof path === 'string' && path.startsWith('/') && !NEVER.test(path));
  event.waitUntil(keep(paths.slice(0, 200)));
});

self.addEventListener('fetch', (event) => {
  const request = event.request;
  if (request.method !== 'GET') return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin || NEVER.test(url.pathname)) return;
  // Pages are two versions of one shell (app/web_pages.py): the table pages' (/t/<code>, /w/<code>:
  // the table bundle), kept under the key '/table.html', and every other page's, "/". Offline, a
  // page is its shell as last kept (a table page whose shell was never kept opens with "/").
  const shell = request.mode === 'navigate' ? (/^\/[tw]\//.test(url.pathname) ? '/table.html' : '/') : null;
  event.respondWith(
    fetch(request)
      .then((response) => {
        if (response.ok && response.type === 'basic') {
          const copy = response.clone();
          caches.open(CACHE).then((cache) => cache.put(shell || request, copy));
        }
        return response;
      })
      .catch(() =>
        caches
          .match(shell || request, { ignoreVary: true })
          .then((cached) => cached || (shell ? caches.match('/', { ignoreVary: true }) : null))
          .then((cached) => cached || Response.error()),
      ),
  );
});

// Web Push (web/js/push-sw.js): challenges, tournaments and "your turn" reach a closed tab.
importScripts('/js/push-sw.js');
