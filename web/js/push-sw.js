// Web Push in the service worker (issue 37): the server's notices reach a device whose tabs are all
// closed. Each push is {kind, params, url, tag, lang} (app/push.py), worded here in the device's
// language from the same translation files as the pages; a tap opens (or focuses) its page.
// Imported by the app's service worker (web/sw.js) with importScripts('/js/push-sw.js'); a classic
// script, not a module (service workers load those everywhere).

const PUSH_TEXTS = {}; // lang -> the translation file, once fetched

async function pushTexts(lang) {
  const wanted = ['en', 'ru', 'az', 'et', 'fi'].includes(lang) ? lang : 'en';
  if (!PUSH_TEXTS[wanted]) {
    try {
      const response = await fetch(`/i18n/${wanted}.json`);
      PUSH_TEXTS[wanted] = response.ok ? await response.json() : {};
    } catch {
      PUSH_TEXTS[wanted] = {};
    }
  }
  return PUSH_TEXTS[wanted];
}

let pushStrings = {}; // the translation file of the push being shown

function t(key, params = {}) {
  let text = pushStrings[key];
  if (text && typeof text === 'object') text = text.other;
  if (typeof text !== 'string') return key;
  return text.replace(/\{(\w+)\}/g, (whole, name) => (name in params ? String(params[name]) : whole));
}

function pushBody(kind, params) {
  switch (kind) {
    case 'challenge':
      return t('push.challenge', params);
    case 'tournament_starting':
      return t('push.tournament_starting', params);
    case 'your_turn':
      return t('push.your_turn', params);
    default:
      return t('push.generic', params);
  }
}

async function showPush(data) {
  pushStrings = await pushTexts(data.lang);
  const body = pushBody(data.kind, data.params || {});
  await self.registration.showNotification(t('app.name'), {
    body,
    tag: data.tag || data.kind || 'durak',
    renotify: true,
    icon: '/favicon.svg',
    data: { url: typeof data.url === 'string' && data.url.startsWith('/') ? data.url : '/' },
  });
}

self.addEventListener('push', (event) => {
  let data = {};
  try {
    data = event.data ? event.data.json() : {};
  } catch {
    data = {};
  }
  event.waitUntil(showPush(data));
});

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  const url = new URL((event.notification.data && event.notification.data.url) || '/', self.location.origin).href;
  event.waitUntil(
    self.clients.matchAll({ type: 'window', includeUncontrolled: true }).then((open) => {
      for (const client of open) {
        if (client.url === url && 'focus' in client) return client.focus();
      }
      return self.clients.openWindow(url);
    }),
  );
});
