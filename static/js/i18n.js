// The texts the scripts show, in the page's language: Django's JavaScript catalog (/jsi18n/<language>/<version>/,
// loaded by base.html as a classic script before the modules) defines a global `django` with
// gettext, ngettext and interpolate. Without it (a test page, the catalog failing to load) the
// English text is shown. Strings are found by `manage.py makemessages -d djangojs`
// (docs/playing.md, "Languages"): call these functions by these names, with literal strings.

function catalog() {
  const django = globalThis.django;
  return django && typeof django.gettext === 'function' ? django : null;
}

/** The translation of `text`. */
export function gettext(text) {
  const django = catalog();
  return django ? django.gettext(text) : text;
}

/** The translation of `singular` or `plural`, as the language's plural rule picks for `count`. */
export function ngettext(singular, plural, count) {
  const django = catalog();
  if (django && typeof django.ngettext === 'function') return django.ngettext(singular, plural, count);
  return count === 1 ? singular : plural;
}

/** The translation of `text` in the given context (pgettext). */
export function pgettext(context, text) {
  const django = catalog();
  if (django && typeof django.pgettext === 'function') return django.pgettext(context, text);
  return text;
}

/**
 * `format` with its placeholders filled: named ("%(name)s" from an object, `named` true) or in
 * order ("%s" from an array), as Django's interpolate does.
 */
export function interpolate(format, values, named = false) {
  const django = catalog();
  if (django && typeof django.interpolate === 'function') return django.interpolate(format, values, named);
  if (named) return format.replace(/%\(\w+\)s/g, (m) => String(values[m.slice(2, -2)]));
  let i = 0;
  return format.replace(/%s/g, () => String(values[i++]));
}

/** `format` with its named placeholders filled: fmt(gettext('%(name)s to move'), {name}). */
export function fmt(format, values) {
  return interpolate(format, values, true);
}

/** The page's language (the <html lang> Django set), e.g. "es"; for number formats. */
export function language() {
  return (document.documentElement && document.documentElement.lang) || 'en';
}
