/**
 * The copy button of markup put on screen before the widget's script (the server render's, and the
 * first screen a page's head puts into the plain element): it works from the first paint until the
 * widget takes the markup over (then the button it was on is gone, and the widget's own takes its
 * place). The same as src/controllers/clipboard.ts does, in a few hundred bytes: the Clipboard API
 * inside the tap, else the field selected and execCommand('copy'), else the code left selected with
 * the hint to copy by hand; "copied" said on the button and in the live region only when a copy
 * happened, for COPIED_FOR_MS; `pix-copy` fired as the widget fires it. The `pix-checkout:copy-ready`
 * mark says it is in place (bench/phone.ts reads it). Plain ES2017, no helper: it is sent as it is
 * written here.
 */
import { COPIED_FOR_MS } from '../../src/shared/first-screen.ts';

/** A function expression of the element (its shadow root holds the markup) and the texts (FirstScreen's `texts`). */
export const COPY_HANDLER = `(e,t)=>{const r=e&&e.shadowRoot,b=r&&r.querySelector('[part~="copy-button"]'),f=r&&r.querySelector('[part~="code"]');if(!b||!f)return;const l=r.querySelector('[role=status]');let h;b.addEventListener('click',()=>{const d=m=>{const c=m!=='manual';clearTimeout(h);b.textContent=c?t.copied:t.copy;b.className=c?'copied':'failed';if(l)l.textContent=c?t.copied:t.failed;if(!c&&!r.getElementById('copy-hint')){const p=document.createElement('p');p.setAttribute('part','copy-hint');p.id='copy-hint';p.textContent=t.failed;b.after(p);f.setAttribute('aria-describedby','copy-hint')}if(c)h=setTimeout(()=>{b.textContent=t.copy;b.className='idle'},${COPIED_FOR_MS});const v=new Event('pix-copy',{bubbles:true,composed:true});v.detail={copied:c,method:m};e.dispatchEvent(v)};let w;try{w=navigator.clipboard.writeText(f.value)}catch(x){w=Promise.reject(x)}w.then(()=>d('clipboard'),()=>{f.focus();f.select();let o=false;try{o=document.execCommand('copy')}catch(x){}d(o?'execCommand':'manual')})});performance.mark('pix-checkout:copy-ready')}`;
