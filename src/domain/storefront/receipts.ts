/**
 * Receipts: bearer credit from an anonymous purchase. The id (`rcpt_` + 128 random bits,
 * base64url) is shown once; only its SHA-256 is stored, so the database never holds a
 * usable receipt.
 */
import { createHash } from 'node:crypto';
import { randomString } from '../shared/ids.js';

const RECEIPT = /^rcpt_[A-Za-z0-9_-]{22}$/;

export const newReceiptId = (): string => `rcpt_${randomString(16, 'base64url')}`;

export const isReceiptId = (value: string): boolean => RECEIPT.test(value);

export const receiptHash = (receiptId: string): string => createHash('sha256').update(receiptId).digest('hex');
