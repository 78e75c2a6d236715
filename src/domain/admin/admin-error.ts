/** An operator's request that cannot be carried out as asked (an unknown user, a taken name); the message says why. */
export class AdminError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AdminError';
  }
}
