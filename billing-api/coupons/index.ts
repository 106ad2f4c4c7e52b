// The coupons domain's public surface: what other domains and the composition root use.
// Records (*.entity.ts) are imported directly; everything else goes through here.
export { couponDiscount } from './discount.js'
export { redeemCoupon } from './redeem-coupon.js'
