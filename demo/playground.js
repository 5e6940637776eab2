// The playground: a <pix-checkout> in open-amount mode (the page chooses the amount; the dev stack
// allows it) with live controls for its attributes and --pix-* custom properties, and the HTML a
// merchant would paste. Loaded when the playground is first shown.

/** The widget's custom properties and their light defaults (src/pix-checkout.styles.ts). */
const COLORS = [
  ['--pix-accent', 'Destaque', '#0b7a5c'],
  ['--pix-on-accent', 'Texto no destaque', '#ffffff'],
  ['--pix-color', 'Texto', '#1a1f24'],
  ['--pix-background', 'Fundo', '#ffffff'],
  ['--pix-muted-color', 'Texto secundário', '#545e68'],
  ['--pix-border-color', 'Bordas', '#aab4bd'],
  ['--pix-success-color', 'Sucesso', '#0b7a5c'],
  ['--pix-danger-color', 'Erro e expiração', '#b3261e'],
];
/** Attributes and their defaults: only what differs goes into the snippet. */
const DEFAULTS = { locale: 'pt-BR', layout: 'auto', theme: 'auto', mode: 'full', renewals: '2' };
/** The open-amount bounds, from the shop's configuration (the partner's limits, in src/shared). */
let MIN_AMOUNT = 0;
let MAX_AMOUNT = 0;

const $ = (id) => document.getElementById(id);

function escapeAttr(value) {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}

let started = false;

export async function initPlayground() {
  if (started) return;
  started = true;
  ({ min: MIN_AMOUNT, max: MAX_AMOUNT } = (await (await fetch('/shop/config')).json()).open_amount);
  $('pg-amount').min = String(MIN_AMOUNT);
  $('pg-amount').max = String(MAX_AMOUNT);
  const form = $('pg-form');
  const colorBox = $('pg-colors');
  /** Custom properties the visitor changed: only they are set (and pasted). */
  const changed = new Set();

  for (const [name, label, value] of COLORS) {
    const id = `pg${name.slice(5)}`;
    const input = Object.assign(document.createElement('input'), { type: 'color', id, name, value });
    const text = document.createElement('label');
    text.htmlFor = id;
    const code = document.createElement('code');
    code.textContent = name;
    const words = document.createElement('span');
    words.append(label, code);
    text.append(input, words);
    colorBox.append(text);
  }

  const widget = document.createElement('pix-checkout');
  widget.id = 'pg-widget';
  widget.setAttribute('endpoint', '/api');
  $('pg-slot').append(widget);

  /** The amount as the attribute writes it, or null (and a message) when it is out of bounds. */
  function amountValue() {
    const input = $('pg-amount');
    const value = Number(input.value);
    const ok =
      input.value !== '' && Number.isFinite(value) && value >= MIN_AMOUNT && value <= MAX_AMOUNT && Math.abs(value * 100 - Math.round(value * 100)) < 1e-6;
    const brl = (n) => new Intl.NumberFormat('pt-BR', { style: 'currency', currency: 'BRL' }).format(n);
    $('pg-amount-error').textContent = ok ? '' : `Use um valor de ${brl(MIN_AMOUNT)} a ${brl(MAX_AMOUNT)}, com até dois decimais.`;
    input.setAttribute('aria-invalid', String(!ok));
    return ok ? value.toFixed(2) : null;
  }

  let lastAmount = '49.90';
  function apply() {
    const amount = amountValue() ?? lastAmount;
    lastAmount = amount;
    const attrs = {
      endpoint: '/api',
      amount,
      description: $('pg-description').value.trim(),
      locale: $('pg-locale').value,
      layout: $('pg-layout').value,
      theme: $('pg-theme').value,
      mode: $('pg-mode').value,
      renewals: String(Math.max(0, Math.min(10, Math.trunc(Number($('pg-renewals').value) || 0)))),
    };
    for (const [name, value] of Object.entries(attrs)) {
      if (name === 'description' && value === '') widget.removeAttribute(name);
      else if (widget.getAttribute(name) !== value) widget.setAttribute(name, value);
    }

    const properties = [];
    for (const [name] of COLORS) if (changed.has(name)) properties.push([name, form.elements[name].value]);
    if (changed.has('--pix-radius')) properties.push(['--pix-radius', `${$('pg-radius').value}px`]);
    if (changed.has('--pix-qr-size')) properties.push(['--pix-qr-size', `${$('pg-qr-size').value}rem`]);
    if ($('pg-font').value) properties.push(['--pix-font-family', $('pg-font').value]);
    widget.removeAttribute('style');
    for (const [name, value] of properties) widget.style.setProperty(name, value);
    $('pg-radius-out').textContent = `${$('pg-radius').value}px`;
    $('pg-qr-size-out').textContent = `${$('pg-qr-size').value}rem`;

    const origin = location.origin;
    const lines = [
      `<script type="module" src="${origin}/api/pix-checkout.js"></script>`,
      '<pix-checkout',
      `  endpoint="${origin}/api"`,
      `  amount="${amount}"`,
    ];
    if (attrs.description) lines.push(`  description="${escapeAttr(attrs.description)}"`);
    for (const name of ['locale', 'layout', 'theme', 'mode', 'renewals']) if (attrs[name] !== DEFAULTS[name]) lines.push(`  ${name}="${attrs[name]}"`);
    if (properties.length) lines.push(`  style="${escapeAttr(properties.map(([n, v]) => `${n}: ${v}`).join('; '))}"`);
    lines.push('></pix-checkout>');
    $('pg-snippet').textContent = lines.join('\n');
  }

  form.addEventListener('submit', (event) => event.preventDefault());
  form.addEventListener('input', (event) => {
    const name = event.target.name;
    if (name?.startsWith('--pix-')) changed.add(name);
    // Typing an amount or a description would create a payment per keystroke: those apply on change.
    if (['amount', 'description', 'renewals'].includes(name)) return;
    apply();
  });
  form.addEventListener('change', () => apply());
  form.addEventListener('reset', () => {
    changed.clear();
    // The form's values are restored after the event.
    setTimeout(apply);
  });

  for (const size of ['phone', 'desktop']) {
    $(`pg-width-${size}`).addEventListener('click', () => {
      $('pg-frame').className = `pg-frame ${size}`;
      $('pg-width-phone').setAttribute('aria-pressed', String(size === 'phone'));
      $('pg-width-desktop').setAttribute('aria-pressed', String(size === 'desktop'));
    });
  }

  $('pg-copy').addEventListener('click', async () => {
    const status = $('pg-copy-status');
    try {
      await navigator.clipboard.writeText($('pg-snippet').textContent);
      status.textContent = 'HTML copiado.';
    } catch {
      getSelection()?.selectAllChildren($('pg-snippet'));
      status.textContent = 'Não foi possível copiar: o HTML ficou selecionado, copie manualmente.';
    }
  });

  apply();
}
