/**
 * The partner's customers as the sandbox knows them, for transfers (spec 4.6): who they are, whether
 * their KYC is approved, their Pix keys, and how their bank behaves. The real service keeps this
 * behind its KYC process; the sandbox seeds a few documented test customers (README.md), one per
 * outcome a transfer can have, and lets tests add more through the control API.
 */
import { normalizeDocument } from '../../src/shared/document.ts';
import { normalizePixKey, type PixKeyType } from '../../src/shared/pix-keys.ts';

export const KYC_STATUSES = ['approved', 'pending', 'rejected'] as const;
export type KycStatus = (typeof KYC_STATUSES)[number];

/**
 * How the customer's bank answers a transfer: `approves` after the usual delay, `refuses` up front
 * (422 bank_refused), `cancels` after the usual delay, `late` approves after the late delay.
 */
export const BANK_BEHAVIOURS = ['approves', 'refuses', 'cancels', 'late'] as const;
export type BankBehaviour = (typeof BANK_BEHAVIOURS)[number];

export interface SandboxCustomer {
  /** CPF or CNPJ, as written (punctuation allowed); looked up without punctuation, letters upper-cased. */
  document: string;
  name: string;
  kyc: KycStatus;
  bank: BankBehaviour;
  /** The customer's keys by type, at most one of each, as the DICT would hold them. */
  keys: Partial<Record<PixKeyType, string>>;
}

/** The seeded test customers; README.md lists them with the outcome each one gives. */
export const TEST_CUSTOMERS: readonly SandboxCustomer[] = [
  {
    document: '123.456.789-09',
    name: 'Ana Aprovada',
    kyc: 'approved',
    bank: 'approves',
    keys: {
      CPF: '123.456.789-09',
      EMAIL: 'ana@cliente.example',
      TELEFONE: '+55 (11) 98765-4321',
      CHAVE_ALEATORIA: '16dc6117-204d-4fbf-8573-ffe03328f598',
    },
  },
  { document: '234.567.891-73', name: 'Bruno Pendente', kyc: 'pending', bank: 'approves', keys: { CPF: '234.567.891-73', EMAIL: 'bruno@cliente.example' } },
  { document: '345.678.912-28', name: 'Carla Recusada', kyc: 'rejected', bank: 'approves', keys: { CPF: '345.678.912-28', EMAIL: 'carla@cliente.example' } },
  { document: '456.789.123-64', name: 'Diego Banco Recusa', kyc: 'approved', bank: 'refuses', keys: { CPF: '456.789.123-64', EMAIL: 'diego@cliente.example' } },
  {
    document: '567.891.234-82',
    name: 'Elisa Banco Cancela',
    kyc: 'approved',
    bank: 'cancels',
    keys: { CPF: '567.891.234-82', EMAIL: 'elisa@cliente.example' },
  },
  { document: '678.912.345-82', name: 'Fabio Banco Lento', kyc: 'approved', bank: 'late', keys: { CPF: '678.912.345-82', TELEFONE: '+5521912345678' } },
  { document: '12.345.678/0001-95', name: 'Gama Comercio LTDA', kyc: 'approved', bank: 'approves', keys: { EMAIL: 'financeiro@gama.example' } },
];

export class CustomerRegistry {
  private readonly byDocument = new Map<string, SandboxCustomer>();
  /** `TYPE:normalized key` -> the key's owner. */
  private readonly byKey = new Map<string, SandboxCustomer>();

  constructor(customers: readonly SandboxCustomer[] = TEST_CUSTOMERS) {
    for (const customer of customers) this.add(customer);
  }

  /** Adds a customer; refused (with the reason) when the document or one of the keys is taken. */
  add(customer: SandboxCustomer): { ok: true } | { ok: false; field: string; reason: string } {
    if (this.byDocument.has(normalizeDocument(customer.document))) return { ok: false, field: 'document', reason: 'is already a customer' };
    for (const [type, key] of Object.entries(customer.keys) as [PixKeyType, string][]) {
      if (this.byKey.has(keyId(key, type))) return { ok: false, field: `keys.${type}`, reason: 'is registered to another customer' };
    }
    this.byDocument.set(normalizeDocument(customer.document), customer);
    for (const [type, key] of Object.entries(customer.keys) as [PixKeyType, string][]) this.byKey.set(keyId(key, type), customer);
    return { ok: true };
  }

  byDocumentOf(document: string): SandboxCustomer | undefined {
    return this.byDocument.get(normalizeDocument(document));
  }

  ownerOf(key: string, type: PixKeyType): SandboxCustomer | undefined {
    return this.byKey.get(keyId(key, type));
  }

  list(): SandboxCustomer[] {
    return [...this.byDocument.values()];
  }
}

function keyId(key: string, type: PixKeyType): string {
  return `${type}:${normalizePixKey(key, type)}`;
}
