-- Agents renew their client certificates before they expire. A renewed certificate is the machine's next one until
-- the agent first holds the channel with it; until then the current one stays valid, so an agent that crashes
-- between the API's answer and saving the new certificate is not locked out.
ALTER TABLE machines ADD COLUMN next_cert_serial text;
