// The same mark the app's page sets (ui/src/interactive.ts), at the same
// moment: after the first frame the user can act in has been painted.
requestAnimationFrame(() => requestAnimationFrame(() => performance.mark("interactive")));
