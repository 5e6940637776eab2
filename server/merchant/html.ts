/** Text as HTML: `&`, `<`, `>` and quotes as entities, safe in an element's text and in a quoted attribute. */
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
