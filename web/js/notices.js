// In-app notices for a signed-in account (GET /api/notices/stream): a friend's challenge (accept or
// decline right there), his answer to yours, friend requests. While the feed is open the player is
// online to his friends. And Web Push: notices on this device with every tab closed, asked for only
// when the player chooses it (the browser's permission prompt comes from that click).
import { api, errorText, get, post } from './api.js';
import { h } from './dom.js';
import { language, t } from './i18n.js';
import { toast } from './toast.js';

let source = null;
let retry = null;
let who = null;
let challenges = new Map(); // open challenges to me: id -> challenge
const listeners = new Set();

/** Called with the open challenges to me whenever they change (the friends page listens). */
export function onNotices(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function changed() {
  renderBox();
  for (const listener of listeners) listener([...challenges.values()]);
}

export function openChallenges() {
  return [...challenges.values()];
}

/** Follow the account's notice feed (or stop, for a guest or nobody). */
export function followNotices(me) {
  const account = me && me.kind === 'account' ? me.name : null;
  if (account === who) return;
  who = account;
  if (source) source.close();
  clearTimeout(retry);
  source = null;
  challenges = new Map();
  changed();
  if (account) connect();
}

function connect() {
  source = new EventSource('/api/notices/stream');
  source.addEventListener('snapshot', (event) => {
    const data = JSON.parse(event.data);
    challenges = new Map(data.challenges.map((item) => [item.id, item]));
    changed();
  });
  source.addEventListener('challenge', (event) => {
    const item = JSON.parse(event.data);
    challenges.set(item.id, item);
    changed();
  });
  source.addEventListener('challenge_answered', (event) => {
    const item = JSON.parse(event.data);
    const mine = challenges.delete(item.id);
    changed();
    if (!mine && item.status === 'accepted') toast(t('notices.accepted', { name: item.to }), 'info', 6000);
    if (!mine && item.status === 'declined') toast(t('notices.declined', { name: item.to }), 'info', 6000);
  });
  source.addEventListener('friend_request', (event) => toast(t('notices.friend_request', { name: JSON.parse(event.data).name }), 'info', 6000));
  source.addEventListener('friend_accepted', (event) => toast(t('notices.friend_accepted', { name: JSON.parse(event.data).name }), 'info', 6000));
  source.onerror = () => {
    if (source && source.readyState === EventSource.CLOSED) retry = setTimeout(connect, 3000);
  };
}

/** Accept a challenge: sit down at its table and go there. */
export async function acceptChallenge(item) {
  try {
    const answer = await post(`/api/challenges/${item.id}/accept`);
    challenges.delete(item.id);
    changed();
    location.assign(`/t/${answer.code}`);
  } catch (error) {
    toast(errorText(error), 'error');
  }
}

export async function declineChallenge(item) {
  try {
    await post(`/api/challenges/${item.id}/decline`);
  } catch (error) {
    toast(errorText(error), 'error');
  }
  challenges.delete(item.id);
  changed();
}

export function challengeText(item) {
  const rules = item.rules || {};
  const stake = rules.stake ? t('notices.stake', { coins: rules.stake }) : t('notices.free');
  return t('notices.challenge', { name: item.from, seats: rules.seats, deck: rules.deck, stake });
}

/** The corner box of open challenges, on every page but the friends page (which lists them). During a
 * match on the table page (body.match-running) it is a one-line banner over the header instead, the
 * newest challenge only, so that it never covers the felt (app.css). */
export function renderBox() {
  let box = document.getElementById('notice-box');
  const shown = document.getElementById('main')?.dataset.page !== 'friends' ? [...challenges.values()] : [];
  if (!shown.length) {
    if (box) box.remove();
    return;
  }
  if (!box) {
    box = h('div', { id: 'notice-box', class: 'notice-box', role: 'region', 'aria-live': 'polite', 'aria-label': t('notices.title') });
    document.body.append(box);
  }
  box.replaceChildren(
    ...shown.slice(0, 3).map((item) =>
      h(
        'div',
        { class: 'panel notice-card', dataset: { challenge: String(item.id) } },
        h('p', { text: challengeText(item), title: challengeText(item) }),
        h(
          'div',
          { class: 'actions' },
          h('button', { type: 'button', class: 'btn small primary', dataset: { act: 'accept' }, onclick: () => acceptChallenge(item), text: t('notices.accept') }),
          h('button', { type: 'button', class: 'btn small ghost', dataset: { act: 'decline' }, onclick: () => declineChallenge(item), text: t('notices.decline') }),
        ),
      ),
    ),
  );
}

window.addEventListener('hashchange', () => setTimeout(renderBox, 0));

// ---------------------------------------------------------------- Web Push

export function pushSupported() {
  return 'serviceWorker' in navigator && 'PushManager' in window && typeof Notification !== 'undefined';
}

function keyBytes(text) {
  const padded = text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (text.length % 4)) % 4);
  return Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
}

/** 'on' (this device gets notices), 'off', 'denied' (the browser refused) or 'unsupported'. */
export async function pushState() {
  if (!pushSupported()) return 'unsupported';
  if (Notification.permission === 'denied') return 'denied';
  const registration = await navigator.serviceWorker.getRegistration('/');
  const subscription = registration && (await registration.pushManager.getSubscription());
  return subscription && Notification.permission === 'granted' ? 'on' : 'off';
}

/** The player chose notices on this device: only now is the browser asked for its permission. */
export async function enablePush() {
  if (!pushSupported()) throw new Error(t('push.unsupported'));
  const permission = await Notification.requestPermission();
  if (permission !== 'granted') return 'denied';
  const registration = await navigator.serviceWorker.register('/sw.js', { scope: '/' });
  await navigator.serviceWorker.ready;
  const { public_key: key } = await get('/api/push/key');
  const subscription = await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(key) });
  await post('/api/push/subscriptions', { ...subscription.toJSON(), lang: language() });
  return 'on';
}

export async function disablePush() {
  const registration = await navigator.serviceWorker.getRegistration('/');
  const subscription = registration && (await registration.pushManager.getSubscription());
  if (!subscription) return 'off';
  await api('DELETE', '/api/push/subscriptions', { endpoint: subscription.endpoint }).catch(() => null);
  await subscription.unsubscribe();
  return 'off';
}
