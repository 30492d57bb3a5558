// Store (or replace) the N/A calibration of chain search for one configuration
// ($key) of this namespace; $report is its JSON (threshold, probe scores, rates).
MERGE (c:ChainCalibration {namespace: $namespace, key: $key})
SET c.fingerprint = $fingerprint, c.report = $report, c.updated_at = datetime()
