// One line per tool: export { default as <camelCaseId> } from './<group>/<id>.js';
// Append only (concurrent appends are atomic); keep nothing else in this file.
export {};
