/* record's CoreSight ETM part (its operations are tc_record_cs_etm_ops, record_ops.h). */
#ifndef TC_LIB_RECORD_RECORD_CS_ETM_H
#define TC_LIB_RECORD_RECORD_CS_ETM_H

/* Is the sink held through sysfs (<root>/bus/coresight/devices/NAME/enable_sink reads 1)? */
int tc_record_cs_etm_sink_claimed(const char *sysfs_root, const char *sink);

#endif
