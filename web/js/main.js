// Boot: translations, the signed-in user, the header and a small router.
//   /t/<code>  play (invite link)        /w/<code>  spectate (watch link)
//   /#/  lobby   /#/create   /#/login   /#/history   /#/replay/<match id>   /#/admin
//   /#/leaderboard   /#/leaderboard/season   /#/seasons   /#/seasons/<n>   /#/u/<name>  a player's profile
//   /#/admin/integrity   /#/admin/integrity/<flag id>  fair-play flags for admins
//   /#/friends  friends, challenges, notices on this device
//   /#/tournaments   /#/tournaments/<id>  arena tournaments
import { h } from './dom.js';
import { icon } from './icons.js';
import { initI18n, onLanguageChange, t } from './i18n.js';
import { navigationStarted, renderHeader } from './header.js';
import { followNotices } from './notices.js';
import { currentUser, onUserChange, refreshMe } from './session.js';
import { toast } from './toast.js';

const PAGES = {
  lobby: () => import('./pages/lobby.js'),
  create: () => import('./pages/create.js'),
  login: () => import('./pages/login.js'),
  history: () => import('./pages/history.js'),
  replay: () => import('./pages/replay.js'),
  admin: () => import('./pages/admin.js'),
  integrity: () => import('./pages/integrity.js'),
  leaderboard: () => import('./pages/leaderboard.js'),
  profile: () => import('./pages/profile.js'),
  friends: () => import('./pages/friends.js'),
  tournaments: () => import('./pages/tournaments.js'),
  table: () => import('./pages/table.js'),
  missing: () => import('./pages/missing.js'),
};

export function currentRoute() {
  const path = location.pathname;
  let match = path.match(/^\/t\/([A-Za-z0-9_-]+)\/?$/);
  if (match) return { name: 'table', params: { code: match[1], watch: false } };
  match = path.match(/^\/w\/([A-Za-z0-9_-]+)\/?$/);
  if (match) return { name: 'table', params: { code: match[1], watch: true } };
  if (path !== '/' && path !== '/index.html') return { name: 'missing', params: {} };
  const [name, arg, more] = location.hash.replace(/^#\/?/, '').split('?')[0].split('/');
  switch (name) {
    case '':
      return { name: 'lobby', params: {} };
    case 'admin':
      if (arg === 'integrity') return { name: 'integrity', params: { flag: more ? decodeURIComponent(more) : '' } };
      return { name, params: {} };
    case 'create':
    case 'login':
    case 'history':
    case 'friends':
      return { name, params: {} };
    case 'leaderboard':
      return { name, params: { board: arg === 'season' ? 'season' : 'all' } };
    case 'seasons':
      return { name: 'leaderboard', params: { board: arg ? decodeURIComponent(arg) : 'seasons' } };
    case 'tournaments':
      return { name: 'tournaments', params: { id: arg && /^\d+$/.test(arg) ? arg : '' } };
    case 'u':
      return { name: 'profile', params: { name: decodeURIComponent(arg || '') } };
    case 'replay':
      return { name: 'replay', params: { id: decodeURIComponent(arg || ''), verify: more === 'verify' } };
    default:
      return { name: 'missing', params: {} };
  }
}

let mounted = null;
let mounting = 0;
let shown = 0;

async function show() {
  const ticket = ++mounting;
  navigationStarted(); // the menu of the page left closes now, not once the next page has loaded
  const route = currentRoute();
  const main = document.getElementById('main');
  let module;
  try {
    module = await PAGES[route.name]();
  } catch (error) {
    if (navigator.onLine) throw error;
    // Offline, and this page was never kept by the service worker: say so, and load it once back
    // (a new document: the browser remembers a module that failed to load for the page's life).
    if (ticket !== mounting) return;
    main.replaceChildren(h('p', { class: 'panel notice', id: 'offline-page', text: t('net.offline') }));
    renderHeader(route.name);
    window.addEventListener('online', () => location.reload(), { once: true });
    return;
  }
  if (ticket !== mounting) return;
  if (mounted && mounted.unmount) mounted.unmount();
  main.replaceChildren();
  main.dataset.page = route.name;
  mounted = module.mount(main, route.params) || {};
  renderHeader(route.name);
  if (shown++) refreshMe(); // every navigation brings the balance up to date (redrawing only what changed)
}

/** Go to an in-app route ('#/history') or a table path ('/t/<code>'). */
export function navigate(target) {
  if (target.startsWith('#')) {
    if (location.pathname !== '/') location.assign(`/${target}`);
    else location.hash = target;
  } else {
    history.pushState(null, '', target);
    show();
  }
}

/** "No connection — reconnecting…" while the browser is offline (the service worker keeps the shell). */
function watchConnection() {
  let banner = null;
  const show = () => {
    if (navigator.onLine) {
      if (banner) banner.remove();
      banner = null;
      return;
    }
    if (!banner) {
      banner = h('div', { class: 'net-status', id: 'net-status', role: 'status' }, icon('offline'), h('span', { text: t('net.offline') }));
      document.body.append(banner);
    }
  };
  window.addEventListener('online', show);
  window.addEventListener('offline', show);
  onLanguageChange(() => {
    if (banner) banner.lastChild.textContent = t('net.offline');
  });
  show();
}

/** The service worker (web/sw.js): the app shell from the cache when the network is gone, so the
 * game opens from a phone's home screen offline and says it is reconnecting. */
function registerServiceWorker() {
  if (!('serviceWorker' in navigator) || location.protocol === 'file:') return;
  const register = () =>
    navigator.serviceWorker
      .register('/sw.js')
      .then(() => navigator.serviceWorker.ready)
      .then((registration) => {
        // The files this page loaded before the worker ran: kept too, so that it opens offline.
        const paths = performance
          .getEntriesByType('resource')
          .map((entry) => new URL(entry.name))
          .filter((url) => url.origin === location.origin)
          .map((url) => url.pathname + url.search); // hashed URLs (?v=) as the page asked for them
        if (registration.active) registration.active.postMessage({ type: 'keep', paths: ['/', ...new Set(paths)] });
      })
      .catch(() => {});
  // Not while the page is still starting: a few seconds after it has loaded, when the browser is idle.
  const later = () => setTimeout(() => (window.requestIdleCallback ? requestIdleCallback(register, { timeout: 5000 }) : register()), 4000);
  if (document.readyState === 'complete') later();
  else window.addEventListener('load', later, { once: true });
}

async function boot() {
  // The first page's module (and its imports) loads while the words and the session do; show()
  // imports it again and gets the same module.
  PAGES[currentRoute().name]().catch(() => {});
  // The session is asked for beside the words (its listeners draw with them, so it is taken after).
  const words = initI18n();
  const session = refreshMe(words);
  await words;
  watchConnection();
  document.getElementById('skip-link').textContent = t('nav.skip');
  await session;
  onUserChange(followNotices); // challenges and friend requests on every page (web/js/notices.js)
  followNotices(currentUser());
  window.addEventListener('hashchange', show);
  // After every listener has run: a page may take a step back for itself (the table's leave guard
  // asks first and marks the event), and the order of the listeners is not the router's to choose.
  window.addEventListener('popstate', (event) => setTimeout(() => event.takenByPage || show(), 0));
  window.addEventListener('focus', () => refreshMe());
  setInterval(() => {
    if (document.visibilityState === 'visible') refreshMe();
  }, 20000);
  onLanguageChange(() => {
    document.getElementById('skip-link').textContent = t('nav.skip');
    renderHeader(currentRoute().name);
    if (mounted && mounted.relabel) mounted.relabel();
    else show();
  });
  await show();
  registerServiceWorker();
}

boot().catch((error) => {
  console.error(error);
  const main = document.getElementById('main');
  main.replaceChildren(h('p', { class: 'panel error', text: String(error) }));
  toast(String(error), 'error');
});
