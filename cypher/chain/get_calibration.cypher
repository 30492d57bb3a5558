// A stored N/A calibration of chain search for one configuration ($key) of this
// namespace, with the memory fingerprint it was computed on.
MATCH (c:ChainCalibration {namespace: $namespace, key: $key})
RETURN c.fingerprint AS fingerprint, c.report AS report
