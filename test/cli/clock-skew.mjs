// Preload for a CLI process: this machine's clock is SATCHEL_TEST_CLOCK_SKEW_MS off the server's (a VM or
// WSL2 clock that drifted).
const realNow = Date.now;
const skew = Number(process.env.SATCHEL_TEST_CLOCK_SKEW_MS);
Date.now = () => realNow() + skew;
