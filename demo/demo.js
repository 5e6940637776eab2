// The demo page's glue: log the widget's events and play the customer's bank through the sandbox.
const checkout = document.getElementById('checkout');
const simulate = document.getElementById('simulate-pay');
const log = document.getElementById('log');
let reference = null;

function record(type, detail) {
  const item = document.createElement('li');
  item.textContent = `${new Date().toLocaleTimeString()} ${type} ${JSON.stringify(detail?.payment?.status ?? detail?.code ?? '')}`;
  log.prepend(item);
}

for (const type of ['pix-created', 'pix-status-change', 'pix-paid', 'pix-error']) {
  document.addEventListener(type, (event) => record(type, event.detail));
}

document.addEventListener('pix-created', (event) => {
  reference = event.detail.payment.reference;
  simulate.disabled = false;
});
document.addEventListener('pix-paid', () => {
  simulate.disabled = true;
});

simulate.addEventListener('click', async () => {
  if (!reference) return;
  simulate.disabled = true;
  const res = await fetch(`/sandbox/_sandbox/payments/${encodeURIComponent(reference)}/pay`, { method: 'POST' });
  record('sandbox pay', { code: res.status });
});

document.getElementById('amount-form').addEventListener('submit', (event) => {
  event.preventDefault();
  checkout.amount = Number(document.getElementById('amount').value);
  simulate.disabled = true;
  void checkout.start();
});
