// solc's command line as forge runs it (--version; --standard-json on stdin), served by solcjs:
// the npm compiler the Makefile installs, so forge needs no download. Written with writeSync:
// node cuts piped output at 64 KiB when it exits with a write pending.
const fs = require("fs");
const solc = require(process.env.SOLCJS_MODULE);
const args = process.argv.slice(2);
function writeAll(text) {
  const buffer = Buffer.from(text);
  for (let done = 0; done < buffer.length; ) {
    try {
      done += fs.writeSync(1, buffer, done);
    } catch (err) {
      if (err.code !== "EAGAIN") throw err; // a full pipe: try again
    }
  }
}
if (args.includes("--version")) {
  writeAll("solc, the solidity compiler commandline interface\nVersion: " + solc.version() + "\n");
  process.exit(0);
}
const input = fs.readFileSync(0, "utf8");
const output = solc.compile(input);
writeAll(output);
