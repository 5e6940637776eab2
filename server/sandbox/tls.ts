import { generate } from 'selfsigned';

export interface TlsMaterial {
  key: string;
  cert: string;
}

/**
 * A certificate for localhost made at start, as the real service is HTTPS only. Clients trust it
 * through their extra-CA option (the proxy, the command line) rather than by turning checks off.
 */
export async function generateLocalhostCertificate(): Promise<TlsMaterial> {
  const notAfterDate = new Date(Date.now() + 365 * 24 * 3600 * 1000);
  const pems = await generate([{ name: 'commonName', value: 'pix-checkout sandbox' }], {
    keyType: 'ec',
    curve: 'P-256',
    notAfterDate,
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'keyUsage', digitalSignature: true, keyCertSign: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
          { type: 7, ip: '::1' },
        ],
      },
    ],
  });
  return { key: pems.private, cert: pems.cert };
}
