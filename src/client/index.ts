export { createHttpClient, type ConveneHttpClient, type HttpClientOptions, type paths } from './http.js';
