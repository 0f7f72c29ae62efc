// The app's service worker. For now it only carries the Web Push handler (web/js/push-sw.js); an
// app-shell service worker that takes this place keeps the importScripts line.
importScripts('/js/push-sw.js');
