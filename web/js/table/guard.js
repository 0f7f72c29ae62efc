// Leaving a running match asks first, by any way: a link in the header (or anywhere), the back
// button, closing or reloading the tab (beforeunload: the browser's own question). The question
// says what happens: the seat forfeits when its player is not back within the grace.
import { t } from '../i18n.js';

export function leaveGuard(shouldAsk, graceSeconds) {
  const question = () => t('table.leave_guard', { seconds: Math.round(graceSeconds()) });
  let armed = false;

  const onClick = (event) => {
    if (!shouldAsk() || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
    const link = event.target.closest && event.target.closest('a[href]');
    if (!link || link.target === '_blank') return;
    const url = new URL(link.href, location.href);
    // Links within this page (the skip link, "#main") do not leave it.
    if (url.origin === location.origin && url.pathname === location.pathname && !url.hash.startsWith('#/')) return;
    if (window.confirm(question())) {
      disarm();
      return;
    }
    event.preventDefault();
    event.stopImmediatePropagation();
  };
  const onBeforeUnload = (event) => {
    if (!shouldAsk()) return;
    event.preventDefault();
    event.returnValue = question(); // browsers show their own words; the click guard shows ours
  };
  // Back: an extra history entry on the table's address; going back to it asks.
  const onPopState = (event) => {
    if (!armed) return;
    armed = false;
    // the router must not switch pages yet: it skips a step back a page took (main.js), whichever
    // of the two listeners the browser runs first
    event.takenByPage = true;
    event.stopImmediatePropagation();
    if (!shouldAsk() || window.confirm(question())) {
      disarm();
      history.back();
    } else {
      armed = true;
      history.pushState({ leaveGuard: true }, '', location.href);
    }
  };
  document.addEventListener('click', onClick, true);
  window.addEventListener('beforeunload', onBeforeUnload);
  window.addEventListener('popstate', onPopState, true);

  function arm() {
    if (armed || !shouldAsk()) return;
    armed = true;
    history.pushState({ leaveGuard: true }, '', location.href);
  }
  function disarm() {
    window.removeEventListener('beforeunload', onBeforeUnload);
  }
  return {
    arm,
    stop() {
      document.removeEventListener('click', onClick, true);
      window.removeEventListener('beforeunload', onBeforeUnload);
      window.removeEventListener('popstate', onPopState, true);
    },
  };
}
