// Deno's own start (issue 17, goal 4): a script that does nothing, started as
// evalpipe is, so that a start-up row can show what a process pays before its
// first line of work.
// Usage: deno run -A bench/_empty_start.ts
