/**
 * The bottom layer: errors a user can cause, and how they read.
 *
 * @module
 */

export * from "./errors.ts";
