/** Path of the page's only script (served by this site, so the CSP can stay `script-src 'self'`). */
export const COPY_SCRIPT_PATH = '/settings/developer/copy.js';

/**
 * The optional copy button of a secret shown once: reveals each `button[data-copy]` and copies the named
 * field's value to the clipboard. The page works without it.
 */
export const COPY_SCRIPT = `'use strict';
document.querySelectorAll('button[data-copy]').forEach(function (button) {
  var field = document.getElementById(button.getAttribute('data-copy'));
  var status = document.querySelector('[data-copy-status="' + button.getAttribute('data-copy') + '"]');
  if (!field) return;
  button.hidden = false;
  button.addEventListener('click', function () {
    field.focus();
    field.select();
    var done = function (ok) { if (status) status.textContent = ok ? 'Copied to the clipboard.' : 'Copy failed: select the text and copy it by hand.'; };
    var fallback = function () { try { done(document.execCommand('copy')); } catch (e) { done(false); } };
    if (navigator.clipboard && navigator.clipboard.writeText) navigator.clipboard.writeText(field.value).then(function () { done(true); }, fallback);
    else fallback();
  });
});
`;
