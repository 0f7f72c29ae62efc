// Who is signed in (GET /api/session), shared by the header and every page.
import { ApiError, get, post } from './api.js';

let me = null;
let loaded = false;
const listeners = new Set();

function emit() {
  for (const listener of listeners) listener(me);
}

export function currentUser() {
  return me;
}

export function isLoaded() {
  return loaded;
}

export function onUserChange(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export async function refreshMe() {
  try {
    // GET /api/session answers 200 {user: null} to an anonymous visitor (no 401 in the console).
    me = (await get('/api/session')).user;
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 401) {
      loaded = true;
      return me; // keep what we had on a network error
    }
    me = null;
  }
  loaded = true;
  emit();
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
  me = await post('/api/auth/signup', { name, password });
  emit();
  return me;
}

export async function logIn(name, password) {
  me = await post('/api/auth/login', { name, password });
  emit();
  return me;
}

export async function playAsGuest(name) {
  me = await post('/api/auth/guest', { name });
  emit();
  return me;
}

export async function logOut() {
  await post('/api/auth/logout');
  me = null;
  emit();
}

/** A suggestion for the guest name field: a translated ASCII prefix plus four digits. */
export function suggestedGuestName(prefix) {
  return `${prefix}${Math.floor(1000 + Math.random() * 9000)}`;
}
