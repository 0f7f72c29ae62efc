// Translations: web/i18n/<lang>.json, flat {"key": "text with {placeholders}"}. A value may also be
// an object of plural forms ({"one": ..., "few": ..., "many": ..., "other": ...}) chosen by the
// `count` parameter with Intl.PluralRules. Every visible string goes through t() with a literal key;
// tests/web/test_i18n.py checks that every key used exists in every language.

export const LANGUAGES = ['en', 'ru', 'az', 'et', 'fi'];
const STORAGE_KEY = 'durak.lang';

let current = 'en';
let strings = {};
let fallback = {};
const listeners = new Set();

async function load(lang) {
  const response = await fetch(`/i18n/${lang}.json`, { cache: 'no-cache' });
  if (!response.ok) throw new Error(`no translation file for ${lang}`);
  return response.json();
}

/** The language to use: the saved choice, else the browser's first supported language, else English. */
export function pickLanguage() {
  let saved = null;
  try {
    saved = localStorage.getItem(STORAGE_KEY);
  } catch {
    saved = null;
  }
  if (LANGUAGES.includes(saved)) return saved;
  for (const tag of navigator.languages || [navigator.language || 'en']) {
    const base = String(tag).toLowerCase().split('-')[0];
    if (LANGUAGES.includes(base)) return base;
  }
  return 'en';
}

export async function initI18n() {
  fallback = await load('en');
  await setLanguage(pickLanguage(), { save: false });
}

export async function setLanguage(lang, { save = true } = {}) {
  if (!LANGUAGES.includes(lang)) lang = 'en';
  strings = lang === 'en' ? fallback : await load(lang);
  current = lang;
  document.documentElement.lang = lang;
  if (save) {
    try {
      localStorage.setItem(STORAGE_KEY, lang);
    } catch {
      /* private mode: the choice lasts for this page only */
    }
  }
  document.title = t('app.title');
  for (const listener of listeners) listener(lang);
}

export function language() {
  return current;
}

export function onLanguageChange(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** The text for `key` with {name} placeholders filled from `params`. */
export function t(key, params) {
  let text = strings[key] ?? fallback[key];
  if (text === undefined) {
    console.warn(`missing translation: ${key}`);
    text = key;
  }
  if (typeof text === 'object') {
    const count = params && typeof params.count === 'number' ? params.count : 0;
    text = text[formatter('plural', (lang) => new Intl.PluralRules(lang)).select(count)] ?? text.other;
  }
  if (params) text = text.replace(/\{(\w+)\}/g, (whole, name) => (name in params ? String(params[name]) : whole));
  return text;
}

// Each Intl formatter is made once per language and kind: making one costs far more than using it
// (the table formats a count or a number for every seat at every update).
const formatters = new Map();

function formatter(kind, make) {
  const key = `${kind} ${current}`;
  let made = formatters.get(key);
  if (!made) {
    made = make(current);
    formatters.set(key, made);
  }
  return made;
}

export function formatNumber(value) {
  return formatter('number', (lang) => new Intl.NumberFormat(lang)).format(value);
}

/** +10 / −10 / 0 with a real minus sign. */
export function formatSigned(value) {
  if (value > 0) return `+${formatNumber(value)}`;
  if (value < 0) return `\u2212${formatNumber(-value)}`;
  return formatNumber(0);
}

export function formatDate(value) {
  return formatter('date-time', (lang) => new Intl.DateTimeFormat(lang, { dateStyle: 'medium', timeStyle: 'short' })).format(new Date(value));
}

/** A calendar day ("2026-12-02", a UTC day as the server counts them) in the page's language. */
export function formatDay(day) {
  const date = new Date(`${day}T00:00:00Z`);
  if (Number.isNaN(date.getTime())) return String(day);
  return formatter('day', (lang) => new Intl.DateTimeFormat(lang, { dateStyle: 'medium', timeZone: 'UTC' })).format(date);
}
