// The site header: one row on every page and screen (at most 56 px; 44 px during a match): the brand,
// the balance (or "Sign in"), and a menu button. The menu holds the navigation, the player's name and
// profile, the language and "Log out". Where the whole menu fits in the row (1024 px wide or more, and
// measured: names, languages and an admin's extra link differ), it stands open there and the button is
// hidden (class "wide", or "tight": the brand as its mark, narrower links). Every element exists once,
// whatever the width.
import { h } from './dom.js';
import { LANGUAGES, formatNumber, language, setLanguage, t } from './i18n.js';
import { currentUser, logOut, onUserChange } from './session.js';
import { icon } from './icons.js';

let activeRoute = 'lobby';
let menuOpen = false; // kept over a redraw (a new language); a navigation closes it when it starts
let closeMenu = () => {};
let setMenu = () => {};
// What the drawn header shows: who is signed in and the language. The same again (a session refresh,
// a move to another page) keeps every element (a tap on the menu is never lost to a rebuilt node):
// only the marked link and the coins change in place.
let drawn = null;
onUserChange(() => renderHeader(activeRoute));

function signInKey(me) {
  return me ? JSON.stringify([me.kind, me.id, me.name, Boolean(me.is_admin)]) : '';
}

/** A page change begins (the address changed): the menu, opened on the page left, closes now; a menu
 * opened while the next page loads stays open once it is shown. */
export function navigationStarted() {
  menuOpen = false;
  setMenu(false);
}

/** The navigation's mark on the current page's link. */
function markActive(nav, route) {
  // The integrity review is a part of the admin pages: the Admin link stays marked there.
  const current = route === 'integrity' ? 'admin' : route;
  for (const link of nav.querySelectorAll('a[data-route]')) {
    const here = link.dataset.route === current;
    link.classList.toggle('active', here);
    if (here) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
}

/** The coins in the header's row, updated in place. */
function showBalance(status, me) {
  const coins = formatNumber(me.balance ?? 0);
  status.setAttribute('aria-label', t('header.balance_label', { coins }));
  status.dataset.balance = String(me.balance ?? 0);
  status.querySelector('.balance-figure').textContent = coins;
  fitHeader();
}

const ROW_FROM_PX = 1024;

/** The header's layout for this width: the menu in the row if it fits (first at ease, then tight),
 * else folded behind its button. Measured in one task, before the browser paints. */
export function fitHeader() {
  const header = document.getElementById('site-header');
  const inner = header && header.querySelector('.header-inner');
  if (!inner || !inner.querySelector('.site-menu')) return;
  const fits = () => {
    const box = inner.getBoundingClientRect();
    const end = box.right - parseFloat(getComputedStyle(inner).paddingRight) + 0.5;
    return [...inner.children].every((child) => child.getBoundingClientRect().right <= end);
  };
  header.classList.remove('wide', 'tight');
  if (window.innerWidth < ROW_FROM_PX) return;
  header.classList.add('wide');
  if (fits()) return;
  header.classList.add('tight');
  if (fits()) return;
  header.classList.remove('wide', 'tight');
}

// A resize is dispatched once per frame, before the frame is drawn.
window.addEventListener('resize', () => fitHeader());
if (document.fonts) document.fonts.ready.then(() => fitHeader());

function languageName(code) {
  switch (code) {
    case 'ru':
      return t('language.ru');
    case 'az':
      return t('language.az');
    case 'et':
      return t('language.et');
    case 'fi':
      return t('language.fi');
    default:
      return t('language.en');
  }
}

export function renderHeader(route) {
  activeRoute = route;
  const header = document.getElementById('site-header');
  const me = currentUser();
  const key = signInKey(me);
  if (drawn && drawn.key === key && drawn.lang === language() && header.contains(drawn.nav)) {
    markActive(drawn.nav, route);
    if (drawn.balance && me) showBalance(drawn.balance, me);
    return;
  }
  closeMenu();
  const link = (href, name, text) => h('a', { href, class: 'nav-link', dataset: { route: name }, text });
  const nav = h(
    'nav',
    { class: 'site-nav', 'aria-label': t('nav.label') },
    link('/#/', 'lobby', t('nav.lobby')),
    link('/#/create', 'create', t('nav.create')),
    link('/#/leaderboard', 'leaderboard', t('nav.leaderboard')),
    link('/#/tournaments', 'tournaments', t('nav.tournaments')),
    me && me.kind === 'account' ? link('/#/history', 'history', t('nav.history')) : null,
    me && me.kind === 'account' ? link('/#/friends', 'friends', t('nav.friends')) : null,
    me && me.is_admin ? link('/#/admin', 'admin', t('nav.admin')) : null,
  );
  markActive(nav, route);
  const select = h(
    'select',
    {
      class: 'lang-select',
      id: 'lang-select',
      'aria-label': t('language.label'),
      onchange: (event) => {
        menuOpen = false; // a choice made: the page redraws in the new language, the menu closed
        setLanguage(event.target.value);
      },
    },
    LANGUAGES.map((code) => h('option', { value: code, selected: code === language(), text: languageName(code) })),
  );

  // Always in the row: the coins, the guest badge, or "Sign in".
  let status;
  if (!me) {
    status = h('a', { class: 'btn small', href: '/#/login', id: 'login-link', text: t('header.login') });
  } else if (me.kind === 'account') {
    status = h(
      'span',
      { class: 'balance', id: 'balance', 'aria-label': t('header.balance_label', { coins: formatNumber(me.balance ?? 0) }), dataset: { balance: String(me.balance ?? 0) } },
      h('span', { class: 'coin', 'aria-hidden': 'true' }),
      h('span', { class: 'balance-figure', text: formatNumber(me.balance ?? 0) }),
    );
  } else {
    status = h('span', { class: 'badge guest', id: 'guest-badge', text: t('header.guest') });
  }

  // The menu: the navigation, who is signed in, the language, "Log out".
  let user = null;
  if (me) {
    user = h(
      'div',
      { class: 'user-box' },
      me.kind === 'account'
        ? h('a', { class: 'user-name', id: 'user-name', href: `/#/u/${encodeURIComponent(me.name)}`, text: me.name })
        : h('span', { class: 'user-name', id: 'user-name', text: me.name }),
      me.kind === 'guest'
        ? h('a', { class: 'menu-signup', href: '/#/login', id: 'guest-signup' }, h('span', { class: 'long', text: t('header.guest_signup') }), h('span', { class: 'short', text: t('lobby.guest_sign_up') }))
        : null,
      h('button', { class: 'btn small ghost', type: 'button', id: 'logout', onclick: () => logOut().then(() => location.assign('/#/')), text: t('header.logout') }),
    );
  }
  const menu = h('div', { class: 'site-menu', id: 'site-menu' }, nav, h('div', { class: 'menu-tools' }, select, user));
  const button = h(
    'button',
    {
      type: 'button',
      class: 'menu-button',
      id: 'menu-button',
      'aria-label': t('header.menu'),
      'aria-expanded': 'false',
      'aria-controls': 'site-menu',
    },
    icon('menu'),
  );
  const open = (yes) => {
    menuOpen = yes;
    menu.classList.toggle('open', yes);
    button.setAttribute('aria-expanded', yes ? 'true' : 'false');
  };
  button.addEventListener('click', () => open(!menu.classList.contains('open')));
  menu.addEventListener('click', (event) => {
    if (event.target.closest('a')) open(false);
  });
  const outside = (event) => {
    if (!menu.classList.contains('open') || header.contains(event.target)) return;
    open(false);
  };
  const escape = (event) => {
    if (event.key === 'Escape' && menu.classList.contains('open')) {
      open(false);
      button.focus();
    }
  };
  document.addEventListener('pointerdown', outside, true);
  document.addEventListener('keydown', escape);
  closeMenu = () => {
    document.removeEventListener('pointerdown', outside, true);
    document.removeEventListener('keydown', escape);
  };
  setMenu = open;
  open(menuOpen);
  drawn = { key, lang: language(), nav, balance: me && me.kind === 'account' ? status : null };
  header.replaceChildren(
    h(
      'div',
      { class: 'header-inner' },
      h('a', { class: 'brand', href: '/#/', 'aria-label': t('app.name') }, h('span', { class: 'brand-mark', 'aria-hidden': 'true' }, icon('spade')), h('span', { class: 'brand-name', text: t('app.name') })),
      menu,
      h('div', { class: 'header-status' }, status),
      button,
    ),
  );
  fitHeader();
}

/** During a match the header is a slim bar (44 px): one line, the brand as its mark only. */
export function setSlimHeader(slim) {
  document.body.classList.toggle('in-match', slim);
  fitHeader();
}
