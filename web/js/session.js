// Who is signed in (GET /api/session), shared by the header and every page.
//
// Two subscriptions, both called only on a real change (a refresh that brings the same answer calls
// nobody, so nothing is redrawn under the player's finger or over what he typed):
//   onSignInChange: who is signed in changed (nobody, a guest, an account: its kind, id, name or admin role);
//   onUserChange:   that, or the coins of the same account (the header updates its figure in place).
// Every /api/session request is numbered: an answer older than one already taken, or to a request sent
// before a sign-in or sign-out, is dropped (it would bring back who was signed in before).
import { ApiError, get, post } from './api.js';

let me = null;
let loaded = false;
let sent = 0; // /api/session requests sent so far
let taken = 0; // the number of the request whose answer `me` is
let signedAt = 0; // `sent` when the last sign-in or sign-out was answered: older requests are stale
const userListeners = new Set();
const signInListeners = new Set();

/** The same person signed in (or nobody both times): kind, id, name and admin role alike. */
export function sameSignIn(a, b) {
  if (!a || !b) return !a && !b;
  return a.kind === b.kind && a.id === b.id && a.name === b.name && Boolean(a.is_admin) === Boolean(b.is_admin);
}

/** Take a new answer about who is signed in and tell the listeners what really changed (the first
 * answer is news even when nobody is signed in: the header is drawn from it). */
function take(next, first = false) {
  const before = me;
  me = next;
  const who = first || !sameSignIn(before, next);
  const coins = !who && Boolean(next) && (before.balance ?? null) !== (next.balance ?? null);
  if (!who && !coins) return;
  const change = { signIn: who, coins: who || coins };
  for (const listener of [...userListeners]) listener(me, change);
  if (who) for (const listener of [...signInListeners]) listener(me, change);
}

/** A sign-in or sign-out (this tab's own): its answer is who is signed in now. */
function signedIn(next) {
  signedAt = sent;
  taken = sent;
  loaded = true;
  take(next);
  return me;
}

export function currentUser() {
  return me;
}

export function isLoaded() {
  return loaded;
}

/** `listener(me, {signIn, coins})` on a real change of who is signed in or of his coins. */
export function onUserChange(listener) {
  userListeners.add(listener);
  return () => userListeners.delete(listener);
}

/** `listener(me)` only when who is signed in changes (not for his coins). */
export function onSignInChange(listener) {
  signInListeners.add(listener);
  return () => signInListeners.delete(listener);
}

/** Ask the server who is signed in and tell the listeners. With `after` (a promise), the request
 * goes out at once and its answer is taken once `after` has settled: at boot, beside the words. */
export async function refreshMe(after = null) {
  const number = ++sent;
  // GET /api/session answers 200 {user: null} to an anonymous visitor (no 401 in the console).
  const answer = get('/api/session');
  if (after) {
    answer.catch(() => {}); // handled below, once `after` has settled
    await after.catch(() => {});
  }
  let next;
  try {
    next = (await answer).user;
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 401) {
      loaded = true;
      return me; // keep what we had on a network error
    }
    next = null;
  }
  // Sent before a sign-in or sign-out, or older than an answer already taken: stale.
  if (number <= signedAt || number < taken) return me;
  const first = !loaded;
  taken = number;
  loaded = true;
  take(next, first);
  return me;
}

/** Refresh until the balance differs from `before` (the ledger settles a moment after a match). */
export async function refreshUntilBalanceChanges(before, tries = 8) {
  for (let i = 0; i < tries; i++) {
    await refreshMe();
    if (!me || me.balance !== before) return me;
    await new Promise((resolve) => setTimeout(resolve, 250 * (i + 1)));
  }
  return me;
}

export async function signUp(name, password) {
  return signedIn(await post('/api/auth/signup', { name, password }));
}

export async function logIn(name, password) {
  return signedIn(await post('/api/auth/login', { name, password }));
}

export async function playAsGuest(name) {
  return signedIn(await post('/api/auth/guest', { name }));
}

export async function logOut() {
  await post('/api/auth/logout');
  signedIn(null);
}

/** The server signed this tab in another way (quick play made a guest, a guest took a new name):
 * answers to requests sent before are stale; then ask who is signed in now. */
export function signInChanged() {
  signedAt = sent;
  return refreshMe();
}

/** A suggestion for the guest name field: a translated ASCII prefix plus four digits. */
export function suggestedGuestName(prefix) {
  return `${prefix}${Math.floor(1000 + Math.random() * 9000)}`;
}
