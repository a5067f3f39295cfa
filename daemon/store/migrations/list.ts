// One line per migration, oldest first: export { default as m<NNNN><Name> } from './<NNNN>-<name>.js';
// Append only; the migration's `name` ('0002_accounts') decides the order, not this file.
export { default as m0001Core } from './0001-core.js';
export { default as m0100Accounts } from './0100-accounts.js';
export { default as m0200Library } from './0200-library.js';
export { default as m0201Pipelines } from './0201-pipelines.js';
export { default as m0500WatchFolders } from './0500-watch-folders.js';
export { default as m0600Hardening } from './0600-hardening.js';
export { default as m0700Accounts } from './0700-accounts.js';
export { default as m0710QuotaReservations } from './0710-quota-reservations.js';
export { default as m0720Sharing } from './0720-sharing.js';
export { default as m0730BlobStates } from './0730-blob-states.js';
export { default as m0740JobIndexes } from './0740-job-indexes.js';
export { default as m0750JobListOrder } from './0750-job-list-order.js';
export { default as m0760LibraryVersionNumbers } from './0760-library-version-numbers.js';
export { default as m0770UsernameCase } from './0770-username-case.js';
export { default as m0780SsoLinkUnique } from './0780-sso-link-unique.js';
export { default as m0790TeamNameCase } from './0790-team-name-case.js';
export { default as m0800JobHeldBytes } from './0800-job-held-bytes.js';
