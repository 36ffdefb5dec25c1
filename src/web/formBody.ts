import express from 'express';

/**
 * The form parser of the pages and the OAuth endpoints, mounted only on their own routes: small bodies, flat
 * keys (`a[b]` stays a plain key), a repeated field becomes an array (which the handlers refuse).
 */
export const formBody = () => express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 50 });
