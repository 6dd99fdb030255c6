// Preload for servers that have no host option: bind every listen() to 127.0.0.1 only.
const http = require("http");
const listen = http.Server.prototype.listen;
http.Server.prototype.listen = function (...args) {
  const port = typeof args[0] === "string" && /^[0-9]+$/.test(args[0]) ? Number(args[0]) : args[0];
  if (typeof port === "number") {
    args[0] = port;
    const callback = typeof args[args.length - 1] === "function" ? args.pop() : undefined;
    return listen.call(this, args[0], "127.0.0.1", callback);
  }
  if (typeof args[0] === "object" && args[0] !== null) {
    args[0] = { ...args[0], host: "127.0.0.1" };
  }
  return listen.apply(this, args);
};
